"""DyT with np.tanh(..., out=) and in-place products on the layer's cached arrays."""
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype)) if elementwise_affine and bias else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.x = x
        self.lead = tuple(range(x.ndim - len(self.normalized_shape)))
        t = x * self.alpha.data
        np.tanh(t, out=t)
        self.t = t
        y = t * self.gamma.data
        y += self.beta.data
        return y

    def backward(self, dy):
        self.gamma.grad += (dy * self.t).sum(axis=self.lead)
        self.beta.grad += dy.sum(axis=self.lead)
        du = dy * self.gamma.data
        du *= 1.0 - self.t * self.t
        self.alpha.grad += (du * self.x).sum().reshape(1)
        du *= self.alpha.data
        return du
