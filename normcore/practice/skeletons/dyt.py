"""Practice: DyT (Dynamic Tanh), forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
DyT from "Transformers without Normalization" (Zhu, Chen, He, LeCun and Liu, 2025), the
element-wise replacement for LayerNorm:

    y = gamma * tanh(alpha * x) + beta

over the last len(normalized_shape) axes, with alpha ONE learned scalar (a Parameter of
shape (1,)) and gamma, beta of shape normalized_shape. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.DyT on many inputs (ranks 2 to 4, a
normalized_shape of several axes, float32, one sample, one channel, alpha large enough for
tanh to saturate and small enough for it to be nearly linear, a negative alpha) and, when a
check fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> dyt = DyT(3, alpha_init=0.8)
    >>> dyt.gamma.data = np.array([1.0, 2.0, 0.5])
    >>> dyt.beta.data = np.array([0.0, 0.1, -0.2])
    >>> x = np.array([[1.0, -2.0, 4.0], [0.0, 0.5, -3.0]])
    >>> np.round(dyt.forward(x), 4).tolist()
    [[0.664, -1.7433, 0.2983], [0.0, 0.8599, -0.6918]]
    >>> dy = np.array([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]])
    >>> np.round(dyt.backward(dy), 4).tolist()
    [[0.4472, 0.0, -0.0026], [0.4, -0.6845, 0.0259]]
    >>> np.round(dyt.gamma.grad, 4).tolist(), np.round(dyt.beta.grad, 4).tolist()
    ([0.664, -0.19, -2.964], [1.5, -0.5, 1.0])
    >>> np.round(dyt.alpha.grad, 4).tolist()
    [0.0208]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    """Dynamic Tanh over the last len(normalized_shape) axes: y = gamma * tanh(alpha * x) + beta.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dalpha,
      dL/dgamma and dL/dbeta to ``self.alpha.grad``, ``self.gamma.grad`` and
      ``self.beta.grad`` (the caller zeroes them).
    - ``self.alpha``: a Parameter of shape (1,), one scalar, starting at ``alpha_init``.
    - ``self.gamma``, ``self.beta``: Parameters of shape normalized_shape.
    - ``train()`` / ``eval()`` (DyT behaves the same in both).

    No statistics, no eps. Which axes each gradient is summed over is part of the task. If
    you are unsure, decide, and let the grader tell you.
    """

    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))  # one scalar, shared by every element
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype)) if elementwise_affine and bias else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: t = tanh(alpha * x), then y = gamma * t + beta.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: DyT.forward")

    def backward(self, dy):
        # TODO: dgamma and dbeta (accumulate with +=), then back through gamma and tanh:
        # TODO: dx, and dalpha (accumulate with +=).
        raise NotImplementedError("TODO: DyT.backward")
