"""RMSNorm: the norm of each row (root of the sum of squares)."""
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
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        k = len(self.normalized_shape)
        self.axes = tuple(range(x.ndim - k, x.ndim))
        self.lead = tuple(range(x.ndim - k))
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        ms = np.square(x).sum(axis=self.axes, keepdims=True)
        ms += eps
        np.sqrt(ms, out=ms)
        np.reciprocal(ms, out=ms)
        self.rrms = ms
        self.xhat = x * ms
        y = self.xhat.copy()
        y *= self.gamma.data
        return y

    def backward(self, dy):
        self.gamma.grad += (dy * self.xhat).sum(axis=self.lead)
        g = dy * self.gamma.data
        proj = (g * self.xhat).sum(axis=self.axes, keepdims=True)
        g -= self.xhat * proj
        g *= self.rrms
        return g
