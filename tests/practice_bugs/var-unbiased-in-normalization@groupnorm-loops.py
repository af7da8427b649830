"""Test fixture: a GroupNorm written with loops over the samples and the groups that
normalises with the unbiased variance (divides by m - 1), var-unbiased-in-normalization
(the backward is right for that forward)."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        self.G, self.C, self.eps = num_groups, num_channels, eps
        self.gamma = Parameter(np.ones(num_channels, dtype))
        self.beta = Parameter(np.zeros(num_channels, dtype))

    def forward(self, x):
        N, cg = x.shape[0], self.C // self.G
        xhat = np.empty(x.shape)
        self.inv = np.empty((N, self.G))
        for n in range(N):
            for g in range(self.G):
                block = x[n, g * cg:(g + 1) * cg]
                m = block.size
                mu = block.sum() / m
                var = ((block - mu) ** 2).sum() / (m - 1)          # unbiased
                self.inv[n, g] = 1.0 / np.sqrt(var + self.eps)
                xhat[n, g * cg:(g + 1) * cg] = (block - mu) * self.inv[n, g]
        self.xhat = xhat
        view = (1, -1) + (1,) * (x.ndim - 2)
        return (xhat * self.gamma.data.reshape(view) + self.beta.data.reshape(view)).astype(x.dtype)

    def backward(self, dy):
        N, cg = dy.shape[0], self.C // self.G
        view = (1, -1) + (1,) * (dy.ndim - 2)
        axes = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * self.xhat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        dxhat = dy * self.gamma.data.reshape(view)
        dx = np.empty(dy.shape)
        for n in range(N):
            for g in range(self.G):
                s = slice(g * cg, (g + 1) * cg)
                d, h = dxhat[n, s], self.xhat[n, s]
                dx[n, s] = self.inv[n, g] * (d - d.mean() - h * (d * h).mean())
        return dx.astype(dy.dtype)
