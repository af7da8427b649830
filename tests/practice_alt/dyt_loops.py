"""Test fixture: a correct DyT written with Python loops over the rows and the elements of
each row (math.tanh one value at a time), the gradients summed into local accumulators and
added to the Parameters at the end. The grader must pass it.
"""

import math

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def forward(self, x):
        d = int(np.prod(self.normalized_shape))
        rows = x.reshape(-1, d).astype(np.float64)
        a = float(self.alpha.data[0])
        gamma, beta = self.gamma.data.reshape(d), self.beta.data.reshape(d)
        t = np.empty_like(rows)
        y = np.empty_like(rows)
        for i in range(rows.shape[0]):
            for j in range(d):
                t[i, j] = math.tanh(a * rows[i, j])
                y[i, j] = gamma[j] * t[i, j] + beta[j]
        self.rows, self.t = rows, t
        return y.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        rows, t = self.rows, self.t
        n, d = rows.shape
        a = float(self.alpha.data[0])
        gamma = self.gamma.data.reshape(d)
        g = dy.reshape(n, d).astype(np.float64)
        dx = np.empty((n, d))
        dgamma, dbeta, dalpha = np.zeros(d), np.zeros(d), 0.0
        for i in range(n):
            for j in range(d):
                dgamma[j] += g[i, j] * t[i, j]
                dbeta[j] += g[i, j]
                du = g[i, j] * gamma[j] * (1.0 - t[i, j] ** 2)
                dalpha += du * rows[i, j]
                dx[i, j] = a * du
        self.gamma.grad += dgamma.reshape(self.normalized_shape)
        self.beta.grad += dbeta.reshape(self.normalized_shape)
        self.alpha.grad += dalpha
        return dx.reshape(dy.shape).astype(dy.dtype)
