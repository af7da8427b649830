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

    def _norm(self, x):
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        self.dims = tuple(range(-len(self.normalized_shape), 0))
        self.rrms = 1.0 / np.sqrt(np.mean(x * x, axis=self.dims, keepdims=True) + eps)
        return x * self.rrms

    def forward(self, x):
        self.xhat = self._norm(x)
        return self.xhat * self.gamma.data

    def backward(self, dy):
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        self.gamma.grad += (dy * self.xhat).sum(axis=lead)
        g = dy * self.gamma.data
        return self.rrms * (g - self.xhat * (g * self.xhat).mean(axis=self.dims, keepdims=True))
