"""Test fixture: a correct BatchNorm1d written differently from the reference answer.

The parameters are called weight and bias (PyTorch's names), there are no train()/eval()
methods (the grader sets ``training``), and the backward is written with sums over N.
"""

import numpy as np


class Param:
    def __init__(self, value):
        self.data = value
        self.grad = np.zeros_like(value)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.c, self.eps, self.momentum = num_features, eps, momentum
        self.weight = Param(np.ones(num_features))
        self.bias = Param(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.steps = 0
        self.training = True

    def _to2d(self, x):  # (N, C) or (N, C, L) -> (M, C)
        return x if x.ndim == 2 else x.transpose(0, 2, 1).reshape(-1, self.c)

    def _from2d(self, a, shape):
        return a if len(shape) == 2 else a.reshape(shape[0], shape[2], shape[1]).transpose(0, 2, 1)

    def forward(self, x):
        a = self._to2d(x).astype(np.float64)
        if self.training:
            mu, var = a.mean(0), a.var(0)
            m = len(a)
            self.steps += 1
            w = self.momentum if self.momentum is not None else 1.0 / self.steps
            self.running_mean = (1 - w) * self.running_mean + w * mu
            self.running_var = (1 - w) * self.running_var + w * var * m / (m - 1)
        else:
            mu, var = self.running_mean, self.running_var
        inv = 1.0 / np.sqrt(var + self.eps)
        xhat = (a - mu) * inv
        self.saved = (xhat, inv, x.shape, x.dtype, self.training)
        return self._from2d(xhat * self.weight.data + self.bias.data, x.shape).astype(x.dtype)

    def backward(self, dy):
        xhat, inv, shape, dtype, training = self.saved
        g = self._to2d(dy).astype(np.float64)
        self.weight.grad += (g * xhat).sum(0)
        self.bias.grad += g.sum(0)
        gx = g * self.weight.data
        if training:
            m = len(g)
            dx = inv / m * (m * gx - gx.sum(0) - xhat * (gx * xhat).sum(0))
        else:
            dx = gx * inv
        return self._from2d(dx, shape).astype(dtype)
