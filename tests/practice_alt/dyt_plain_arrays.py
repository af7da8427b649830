"""Test fixture: a correct DyT whose alpha, gamma and beta are plain arrays (alpha of shape
(), a 0-d array) with their gradients assigned to dalpha, dgamma and dbeta (summed in the
parameter's dtype), and 1 - t**2 written as (1 - t) * (1 + t). The grader must pass it (and
skip the accumulation check, which needs Parameter objects).
"""

import numpy as np


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = np.array(alpha_init, dtype=dtype)
        self.gamma = np.ones(self.shape, dtype)
        self.beta = np.zeros(self.shape, dtype)

    def forward(self, x):
        self.x = np.asarray(x, dtype=np.float64)
        self.t = np.tanh(self.alpha * self.x)
        return (self.gamma * self.t + self.beta).astype(x.dtype)

    def backward(self, dy):
        lead = tuple(range(dy.ndim - len(self.shape)))
        self.dgamma = np.sum(dy * self.t, axis=lead, dtype=self.gamma.dtype)
        self.dbeta = np.sum(dy, axis=lead, dtype=self.beta.dtype)
        du = dy * self.gamma * (1 - self.t) * (1 + self.t)
        self.dalpha = np.sum(du * self.x, dtype=self.alpha.dtype)
        return (self.alpha * du).astype(dy.dtype)
