"""Practice: RMSNorm, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
torch.nn.RMSNorm (the norm of LLaMA-style Transformers), for any input whose last axes are
``normalized_shape``. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.RMSNorm on many inputs (ranks 2 to 4, a
normalized_shape of several axes, float32, a zero row, tiny inputs, the default eps) and,
when a check fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> rms = RMSNorm(3)
    >>> rms.gamma.data = np.array([1.0, 2.0, 0.5])
    >>> x = np.array([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]])
    >>> np.round(rms.forward(x), 4).tolist()
    [[0.378, 1.5119, 0.7559], [0.0, -1.0954, 0.8216]]
    >>> dy = np.array([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]])
    >>> np.round(rms.backward(dy), 4).tolist()
    [[0.396, 0.036, -0.117], [0.2739, -0.3286, -0.1095]]
    >>> np.round(rms.gamma.grad, 4).tolist()
    [0.378, 0.2739, 1.7745]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    """Root-mean-square normalisation over the last len(normalized_shape) axes; no beta.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dgamma to
      ``self.gamma.grad`` (the caller zeroes it).
    - ``self.gamma``: a Parameter of shape normalized_shape.
    - ``eps=None`` means the machine epsilon of the input's dtype (``np.finfo(x.dtype).eps``).
    - ``train()`` / ``eval()`` (RMSNorm behaves the same in both).

    Semantics are PyTorch's: what is averaged and where eps goes. If you are unsure, decide,
    and let the grader tell you.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: the normalised axes are the last len(self.normalized_shape) ones.
        # TODO: the root mean square over them, x_hat, then y = gamma * x_hat.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: RMSNorm.forward")

    def backward(self, dy):
        # TODO: dgamma (accumulate with +=), then dx through x_hat and the RMS.
        raise NotImplementedError("TODO: RMSNorm.backward")
