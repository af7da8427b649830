"""Practice: LayerNorm, the forward only, by hand in NumPy.

Forward only: this file asks for ``forward`` alone (``FORWARD_ONLY = True`` below). The
grader checks the forward's numbers and lists the backward's checks as "not asked". For
the backward too: ``normcore practice new layernorm``.

The task
--------
Fill in ``forward`` (the TODO) so that this layer behaves exactly like
torch.nn.LayerNorm, for any input whose last axes are ``normalized_shape``. Then:

    normcore practice check my_layernorm.py

The grader compares your numbers with normcore.LayerNorm on many inputs (ranks 2 to 4, a
normalized_shape of several axes, float32, one sample, a constant row, tiny variances) and,
when a check fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest my_layernorm.py`` checks them):

    >>> ln = LayerNorm(3)
    >>> ln.gamma.data = np.array([1.0, 2.0, 0.5])
    >>> ln.beta.data = np.array([0.0, 0.1, -0.2])
    >>> x = np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    >>> np.round(ln.forward(x), 4).tolist()
    [[-1.069, -0.4345, 0.4682], [-0.7071, -1.3142, 0.5071]]
"""

import numpy as np

FORWARD_ONLY = True  # normcore practice check grades the forward alone


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    """Layer normalisation: each sample standardised over its last len(normalized_shape) axes.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
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
        raise NotImplementedError("TODO: LayerNorm.forward")
