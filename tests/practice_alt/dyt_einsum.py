"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the
parameters named weight and bias, alpha read as alpha.data[0], and tanh's slope written as
1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = Parameter(np.array([alpha_init], dtype=dtype))
        self.weight = Parameter(np.ones(self.shape, dtype))
        self.bias = Parameter(np.zeros(self.shape, dtype))

    def forward(self, x):
        self.x = x
        self.u = self.alpha.data[0] * x
        self.t = np.tanh(self.u)
        return (self.weight.data * self.t + self.bias.data).astype(x.dtype)

    def backward(self, dy):
        d = int(np.prod(self.shape))
        g = dy.reshape(-1, d)
        t, x, u = self.t.reshape(-1, d), self.x.reshape(-1, d), self.u.reshape(-1, d)
        self.weight.grad += np.einsum("nd,nd->d", g, t).reshape(self.shape)
        self.bias.grad += np.einsum("nd->d", g).reshape(self.shape)
        gu = g * self.weight.data.reshape(d) / np.cosh(u) ** 2
        self.alpha.grad += np.einsum("nd,nd->", gu, x)
        return (self.alpha.data[0] * gu).reshape(dy.shape).astype(dy.dtype)
