"""DyT with alpha starting at 0.8, a number in the code, whatever alpha_init says."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = Parameter(np.array([0.8], dtype))
        self.gamma = Parameter(np.ones(shape, dtype))
        self.beta = Parameter(np.zeros(shape, dtype))
        self.lead = None

    def forward(self, x):
        self.x = x
        self.t = np.tanh(self.alpha.data * x)
        return (self.gamma.data * self.t + self.beta.data).astype(x.dtype)

    def backward(self, dy):
        lead = tuple(range(dy.ndim - self.gamma.data.ndim))
        self.gamma.grad += (dy * self.t).sum(axis=lead)
        self.beta.grad += dy.sum(axis=lead)
        du = dy * self.gamma.data * (1.0 - self.t ** 2)
        self.alpha.grad += (du * self.x).sum()
        return (self.alpha.data * du).astype(dy.dtype)
