"""Practice: LayerNorm, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
torch.nn.LayerNorm, for any input whose last axes are ``normalized_shape``. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.LayerNorm on many inputs (ranks 2 to 4, a
normalized_shape of several axes, float32, one sample, a constant row, tiny variances) and,
when a check fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> ln = LayerNorm(3)
    >>> ln.gamma.data = np.array([1.0, 2.0, 0.5])
    >>> ln.beta.data = np.array([0.0, 0.1, -0.2])
    >>> x = np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    >>> np.round(ln.forward(x), 4).tolist()
    [[-1.069, -0.4345, 0.4682], [-0.7071, -1.3142, 0.5071]]
    >>> dy = np.array([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]])
    >>> np.round(ln.backward(dy), 4).tolist()
    [[0.1718, -0.2577, 0.0859], [0.5303, -0.5303, 0.0]]
    >>> np.round(ln.gamma.grad, 4).tolist(), np.round(ln.beta.grad, 4).tolist()
    ([-1.4226, 0.3536, 1.4921], [1.5, -0.5, 1.0])
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    """Layer normalisation: each sample standardised over its last len(normalized_shape) axes.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dgamma to
      ``self.gamma.grad`` and dL/dbeta to ``self.beta.grad`` (the caller zeroes them).
    - ``self.gamma``, ``self.beta``: Parameters of shape normalized_shape.
    - ``train()`` / ``eval()`` (LayerNorm behaves the same in both).

    Semantics are PyTorch's: which variance and where eps goes. If you are unsure, decide,
    and let the grader tell you.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype)) if elementwise_affine and bias else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: the normalised axes are the last len(self.normalized_shape) ones.
        # TODO: mean and variance over them, x_hat, then y = gamma * x_hat + beta.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: LayerNorm.forward")

    def backward(self, dy):
        # TODO: dgamma and dbeta (accumulate with +=; summed over which axes?), then dx through
        #       x_hat, the mean and the variance.
        raise NotImplementedError("TODO: LayerNorm.backward")
