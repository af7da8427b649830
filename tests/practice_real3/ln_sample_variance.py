"""LayerNorm with the sample variance (n - 1), the statistician's choice."""
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
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
        k = len(self.normalized_shape)
        self.axes = tuple(range(x.ndim - k, x.ndim))
        self.lead = tuple(range(x.ndim - k))
        mu = x.mean(axis=self.axes, keepdims=True)
        n = int(np.prod(self.normalized_shape))
        var = ((x - mu) ** 2).sum(axis=self.axes, keepdims=True) / (n - 1)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mu) * self.rstd
        return self.gamma.data * self.xhat + self.beta.data

    def backward(self, dy):
        self.gamma.grad += (dy * self.xhat).sum(axis=self.lead)
        self.beta.grad += dy.sum(axis=self.lead)
        g = dy * self.gamma.data
        m1 = g.mean(axis=self.axes, keepdims=True)
        m2 = (g * self.xhat).mean(axis=self.axes, keepdims=True)
        return self.rstd * (g - m1 - self.xhat * m2)
