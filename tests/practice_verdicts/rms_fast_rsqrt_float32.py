"""LLaMA's RMSNorm in float32, its 1 / sqrt taken by the fast inverse square root with one
Newton step (up to 2e-3 relative; two steps would be within float32's tolerance): wrong by
more than float32's rounding. Must fail, with no mistake named."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def fast_rsqrt(v):
    """1 / sqrt(v) for float32 v: the bit trick, then one Newton step."""
    v = np.asarray(v, dtype=np.float32)
    i = np.int32(0x5F3759DF) - (v.view(np.int32) >> 1)
    y = i.view(np.float32)
    for _ in range(1):
        y = y * (np.float32(1.5) - np.float32(0.5) * v * y * y)
    return y


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
        h = x.astype(np.float32)
        r = fast_rsqrt(np.mean(h * h, axis=axes, keepdims=True) + np.float32(eps))
        x_hat = h * r
        self.cache = (x_hat, r, x.dtype)
        return (x_hat * self.gamma.data).astype(x.dtype)

    def backward(self, dy):
        x_hat, r, dtype = self.cache
        axes = tuple(range(-len(self.normalized_shape), 0))
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        self.gamma.grad += (dy * x_hat).sum(axis=lead).astype(self.gamma.grad.dtype)
        g = (dy * self.gamma.data).astype(np.float32)
        return (r * (g - x_hat * np.mean(g * x_hat, axis=axes, keepdims=True))).astype(dtype)
