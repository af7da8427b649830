"""LayerNorm from the first two raw moments, E[x^2] - E[x]^2, computed in float64.

The input is upcast once, everything runs in float64, and the results are cast back to the
input's dtype at the end.
"""
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
        self.dtype = x.dtype
        k = len(self.normalized_shape)
        self.axes = tuple(range(x.ndim - k, x.ndim))
        self.lead = tuple(range(x.ndim - k))
        x64 = x.astype(np.float64)
        m1 = x64.mean(axis=self.axes, keepdims=True)
        m2 = (x64 * x64).mean(axis=self.axes, keepdims=True)
        var = np.maximum(m2 - m1 * m1, 0.0)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x64 - m1) * self.rstd
        y = self.gamma.data.astype(np.float64) * self.xhat + self.beta.data.astype(np.float64)
        return y.astype(self.dtype)

    def backward(self, dy):
        dy64 = dy.astype(np.float64)
        self.gamma.grad += (dy64 * self.xhat).sum(axis=self.lead).astype(self.gamma.grad.dtype)
        self.beta.grad += dy64.sum(axis=self.lead).astype(self.beta.grad.dtype)
        g = dy64 * self.gamma.data.astype(np.float64)
        a = g.mean(axis=self.axes, keepdims=True)
        b = (g * self.xhat).mean(axis=self.axes, keepdims=True)
        return (self.rstd * (g - a - self.xhat * b)).astype(dy.dtype)
