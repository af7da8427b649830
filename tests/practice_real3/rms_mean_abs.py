"""RMSNorm variant: each row divided by its mean absolute value (an L1 'RMS')."""
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
        self.x = x
        self.s = np.abs(x).mean(axis=self.axes, keepdims=True) + eps
        self.xhat = x / self.s
        return self.gamma.data * self.xhat

    def backward(self, dy):
        self.gamma.grad += (dy * self.xhat).sum(axis=self.lead)
        g = dy * self.gamma.data
        ds = -(g * self.x).sum(axis=self.axes, keepdims=True) / self.s ** 2
        n = int(np.prod(self.normalized_shape))
        return g / self.s + ds * np.sign(self.x) / n
