"""LayerNorm, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.LayerNorm: each sample is standardised over its
last len(normalized_shape) axes with the biased variance, eps inside the square root.

A name in brackets at the end of a line, such as ``[axes]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    """Layer normalisation over the last axes D (the normalized_shape); input (*, D).

    Forward::

        mean  = mean_D(x),  var = mean_D((x - mean)**2)      (*, 1)   biased
        rstd  = 1 / sqrt(var + eps)                          (*, 1)
        x_hat = (x - mean) * rstd                            (*, D)
        y     = gamma * x_hat + beta                         gamma, beta: D

    Backward, dx_hat = dy * gamma::

        dgamma = sum over the leading axes of dy * x_hat,  dbeta = sum of dy
        dx = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat))

    Training and evaluation are the same.
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
        axes = tuple(range(-len(self.normalized_shape), 0))            # the normalised axes D [axes]
        mean = x.mean(axis=axes, keepdims=True)                         # (*, 1)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)          # (*, 1) biased [var]
        rstd = 1.0 / np.sqrt(var + self.eps)                            # (*, 1) [rstd]
        x_hat = (x - mean) * rstd                                       # (*, D)
        self.cache = (x_hat, rstd, axes)
        y = x_hat
        if self.gamma is not None:
            y = y * self.gamma.data
        if self.beta is not None:
            y = y + self.beta.data
        return y.astype(x.dtype)

    def backward(self, dy):
        x_hat, rstd, axes = self.cache
        lead = tuple(range(dy.ndim - len(axes)))                        # the axes gamma is shared over [lead]
        dx_hat = dy                                                     # (*, D)
        if self.beta is not None:
            self.beta.grad += dy.sum(axis=lead)                         # D [dbeta]
        if self.gamma is not None:
            self.gamma.grad += (dy * x_hat).sum(axis=lead)              # D [dgamma]
            dx_hat = dy * self.gamma.data                               # (*, D)
        mean_dx_hat = dx_hat.mean(axis=axes, keepdims=True)                    # (*, 1)
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)    # (*, 1)
        dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)         # (*, D) [dx]
        return dx.astype(dy.dtype)
