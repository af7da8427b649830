"""LayerNorm: scale the input by gamma, then standardise, then shift by beta."""
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
        self.x = x
        z = self.gamma.data * x
        mu = z.mean(axis=self.axes, keepdims=True)
        var = z.var(axis=self.axes, keepdims=True)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.zhat = (z - mu) * self.rstd
        return self.zhat + self.beta.data

    def backward(self, dy):
        self.beta.grad += dy.sum(axis=self.lead)
        m1 = dy.mean(axis=self.axes, keepdims=True)
        m2 = (dy * self.zhat).mean(axis=self.axes, keepdims=True)
        dz = self.rstd * (dy - m1 - self.zhat * m2)
        self.gamma.grad += (dz * self.x).sum(axis=self.lead)
        return dz * self.gamma.data
