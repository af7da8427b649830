"""Test fixture: a correct LayerNorm written differently from the reference answer.

gamma and beta are plain arrays with their gradients in dgamma / dbeta (assigned, not
accumulated), the variance is E[x**2] - E[x]**2, and the backward is the "sum" form. The
grader must pass it (and skip the accumulation check, which needs Parameter objects).
"""

import numpy as np


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.gamma = np.ones(self.shape, dtype)
        self.beta = np.zeros(self.shape, dtype)

    def forward(self, x):
        k = len(self.shape)
        flat = x.reshape(-1, int(np.prod(self.shape))).astype(np.float64)
        mu = flat.mean(axis=1, keepdims=True)
        var = (flat ** 2).mean(axis=1, keepdims=True) - mu ** 2
        inv = 1.0 / np.sqrt(var + self.eps)
        xhat = (flat - mu) * inv
        self.saved = (xhat, inv, x.shape, x.dtype, k)
        return (xhat * self.gamma.ravel() + self.beta.ravel()).reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        xhat, inv, shape, dtype, k = self.saved
        d = xhat.shape[1]
        g = dy.reshape(-1, d).astype(np.float64)
        self.dgamma = (g * xhat).sum(axis=0).reshape(self.shape).astype(self.gamma.dtype)
        self.dbeta = g.sum(axis=0).reshape(self.shape).astype(self.beta.dtype)
        gx = g * self.gamma.ravel()
        dx = inv / d * (d * gx - gx.sum(axis=1, keepdims=True) - xhat * (gx * xhat).sum(axis=1, keepdims=True))
        return dx.reshape(shape).astype(dtype)
