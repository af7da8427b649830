"""Test fixture: a correct weight-normalized Linear written with a Python loop over the output
rows (each row's norm, its g gradient as a dot product, its v gradient with the projection
subtracted), the Linear's backward as an explicit sum over the input's rows. The grader must
pass it.
"""

import math

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class WeightNormLinear:
    def __init__(self, in_features, out_features, dtype=np.float64):
        self.in_features, self.out_features = in_features, out_features
        self.weight_g = Parameter(np.ones((out_features, 1), dtype))
        self.weight_v = Parameter(np.eye(out_features, in_features, dtype=dtype))
        self.bias = Parameter(np.zeros(out_features, dtype))

    def _weight(self):
        w = np.empty_like(self.weight_v.data)
        norms = []
        for j in range(self.out_features):
            row = self.weight_v.data[j]
            norm = math.sqrt(sum(float(a) * float(a) for a in row))
            norms.append(norm)
            w[j] = self.weight_g.data[j, 0] * row / norm
        return w, norms

    def forward(self, x):
        w, norms = self._weight()
        self.x, self.w, self.norms = x, w, norms
        return (x @ w.T + self.bias.data).astype(x.dtype)

    def backward(self, dy):
        x = self.x.reshape(-1, self.in_features)
        g2 = dy.reshape(-1, self.out_features)
        dw = np.zeros_like(self.w)
        for n in range(x.shape[0]):
            dw += np.outer(g2[n], x[n])
        self.bias.grad += g2.sum(axis=0)
        for j in range(self.out_features):
            v, norm, g = self.weight_v.data[j], self.norms[j], self.weight_g.data[j, 0]
            v_hat = v / norm
            dg = float(np.dot(dw[j], v_hat))
            self.weight_g.grad[j, 0] += dg
            self.weight_v.grad[j] += g / norm * (dw[j] - dg * v_hat)
        return (dy @ self.w).astype(dy.dtype)
