"""Test fixture: a LayerNorm written with a loop over the rows that divides by
sqrt(var) + eps, eps-outside-sqrt (the backward is right for that forward)."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.gamma = Parameter(np.ones(self.shape, dtype))
        self.beta = Parameter(np.zeros(self.shape, dtype))

    def forward(self, x):
        d = int(np.prod(self.shape))
        rows = x.reshape(-1, d)
        out, self.rows = np.empty(rows.shape), []
        for i, r in enumerate(rows):
            mu = sum(r) / d
            std = np.sqrt(sum((v - mu) ** 2 for v in r) / d)
            inv = 1.0 / (std + self.eps)
            xhat = (r - mu) * inv
            self.rows.append((xhat, inv))
            out[i] = xhat * self.gamma.data.ravel() + self.beta.data.ravel()
        return out.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        d = int(np.prod(self.shape))
        g_all = dy.reshape(-1, d)
        dx = np.empty(g_all.shape)
        for i, g in enumerate(g_all):
            xhat, inv = self.rows[i]
            self.gamma.grad += (g * xhat).reshape(self.shape)
            self.beta.grad += g.reshape(self.shape)
            dxhat = g * self.gamma.data.ravel()
            dx[i] = inv * (dxhat - sum(dxhat) / d - xhat * sum(dxhat * xhat) / d)
        return dx.reshape(dy.shape).astype(dy.dtype)
