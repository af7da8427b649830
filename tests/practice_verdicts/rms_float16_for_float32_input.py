"""RMSNorm exact in float64, but computed in float16 for a float32 input ("half is enough
for float32"): the float32 probe fails at its own tolerance, so float64's being right does
not make it pass."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        axes = tuple(range(-len(self.normalized_shape), 0))
        h = x.astype(np.float16) if x.dtype == np.float32 else x
        r = 1.0 / np.sqrt(np.mean(h * h, axis=axes, keepdims=True) + eps)
        x_hat = (h * r).astype(x.dtype)
        self.cache = (x_hat, r.astype(x.dtype))
        return x_hat * self.gamma.data

    def backward(self, dy):
        x_hat, r = self.cache
        axes = tuple(range(-len(self.normalized_shape), 0))
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        self.gamma.grad += (dy * x_hat).sum(axis=lead)
        g = dy * self.gamma.data
        return r * (g - x_hat * np.mean(g * x_hat, axis=axes, keepdims=True))
