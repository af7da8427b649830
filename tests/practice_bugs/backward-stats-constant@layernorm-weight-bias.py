"""Test fixture: a LayerNorm on flattened rows, with weight and bias, whose backward treats
the mean and the standard deviation as constants: dx = dxhat / std, backward-stats-constant."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(np.ones(self.shape, dtype))
        self.bias = Parameter(np.zeros(self.shape, dtype))

    def forward(self, x):
        rows = x.reshape(-1, int(np.prod(self.shape)))
        mu = rows.mean(axis=1, keepdims=True)
        std = np.sqrt(rows.var(axis=1, keepdims=True) + self.eps)
        self.xhat, self.std = (rows - mu) / std, std
        y = self.xhat * self.weight.data.ravel() + self.bias.data.ravel()
        return y.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        g = dy.reshape(self.xhat.shape)
        self.weight.grad += (g * self.xhat).sum(axis=0).reshape(self.shape)
        self.bias.grad += g.sum(axis=0).reshape(self.shape)
        dx = g * self.weight.data.ravel() / self.std      # as if mu and std did not depend on x
        return dx.reshape(dy.shape).astype(dy.dtype)
