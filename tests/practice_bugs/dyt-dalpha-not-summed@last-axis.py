"""Test fixture: a DyT written as a forward/backward pair with a cache tuple whose dalpha is
summed over the last axis only, leaving one value per row, dyt-dalpha-not-summed."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = Parameter(np.array([alpha_init], dtype))
        self.gamma = Parameter(np.ones(self.ns, dtype))
        self.beta = Parameter(np.zeros(self.ns, dtype))

    def forward(self, x):
        t = np.tanh(self.alpha.data * x)
        self.cache = (x, t)
        return (self.gamma.data * t + self.beta.data).astype(x.dtype)

    def backward(self, dy):
        x, t = self.cache
        axes = tuple(range(dy.ndim - len(self.ns)))
        self.gamma.grad += np.sum(dy * t, axis=axes)
        self.beta.grad += np.sum(dy, axis=axes)
        dpre = dy * self.gamma.data * (1 - t * t)
        self.alpha.grad = self.alpha.grad + np.sum(dpre * x, axis=-1)    # one dalpha per row
        return (self.alpha.data * dpre).astype(dy.dtype)
