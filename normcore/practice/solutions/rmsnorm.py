"""RMSNorm, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.RMSNorm: y = x / sqrt(mean(x**2) + eps) * gamma
over the last len(normalized_shape) axes; no mean is subtracted and there is no beta;
eps=None means the machine epsilon of the input's dtype.

A name in brackets at the end of a line, such as ``[axes]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    """Root-mean-square normalisation over the last axes D (the normalized_shape); input (*, D).

    Forward::

        ms    = mean_D(x**2)                  (*, 1)   the mean square, not a variance
        rrms  = 1 / sqrt(ms + eps)            (*, 1)
        x_hat = x * rrms                      (*, D)
        y     = gamma * x_hat                 gamma: D

    Backward, dx_hat = dy * gamma::

        dgamma = sum over the leading axes of dy * x_hat
        dx = rrms * (dx_hat - x_hat * mean_D(dx_hat * x_hat))

    (LayerNorm's backward without its - mean_D(dx_hat) term: no mean was subtracted.)
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
        axes = tuple(range(-len(self.normalized_shape), 0))            # the normalised axes D [axes]
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        ms = (x ** 2).mean(axis=axes, keepdims=True)                    # (*, 1) [mean-square]
        rrms = 1.0 / np.sqrt(ms + eps)                                  # (*, 1) [rrms]
        x_hat = x * rrms                                                # (*, D)
        self.cache = (x_hat, rrms, axes)
        y = x_hat if self.gamma is None else x_hat * self.gamma.data
        return y.astype(x.dtype)

    def backward(self, dy):
        x_hat, rrms, axes = self.cache
        lead = tuple(range(dy.ndim - len(axes)))                        # the axes gamma is shared over [lead]
        dx_hat = dy                                                     # (*, D)
        if self.gamma is not None:
            self.gamma.grad += (dy * x_hat).sum(axis=lead)              # D [dgamma]
            dx_hat = dy * self.gamma.data                               # (*, D)
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)    # (*, 1)
        dx = rrms * (dx_hat - x_hat * mean_dx_hat_x_hat)                       # (*, D) [dx]
        return dx.astype(dy.dtype)
