"""GroupNorm written with loops that takes each group's statistics at one position at a time,
over the group's channels only, forward and backward."""

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
        xs = x.reshape(N, self.C, -1)                      # (N, C, positions)
        xhat = np.empty(xs.shape)
        self.inv = np.empty((N, self.G, xs.shape[2]))
        for n in range(N):
            for g in range(self.G):
                for p in range(xs.shape[2]):
                    col = xs[n, g * cg:(g + 1) * cg, p]    # the group's channels at one position
                    mu = col.mean()
                    self.inv[n, g, p] = 1.0 / np.sqrt(((col - mu) ** 2).mean() + self.eps)
                    xhat[n, g * cg:(g + 1) * cg, p] = (col - mu) * self.inv[n, g, p]
        self.xhat = xhat.reshape(x.shape)
        view = (1, -1) + (1,) * (x.ndim - 2)
        return (self.xhat * self.gamma.data.reshape(view) + self.beta.data.reshape(view)).astype(x.dtype)

    def backward(self, dy):
        N, cg = dy.shape[0], self.C // self.G
        view = (1, -1) + (1,) * (dy.ndim - 2)
        axes = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * self.xhat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        dxhat = (dy * self.gamma.data.reshape(view)).reshape(N, self.C, -1)
        h = self.xhat.reshape(N, self.C, -1)
        dx = np.empty(dxhat.shape)
        for n in range(N):
            for g in range(self.G):
                for p in range(dxhat.shape[2]):
                    s = slice(g * cg, (g + 1) * cg)
                    d, hh = dxhat[n, s, p], h[n, s, p]
                    dx[n, s, p] = self.inv[n, g, p] * (d - d.mean() - hh * (d * hh).mean())
        return dx.reshape(dy.shape).astype(dy.dtype)
