"""Test fixture: a LayerNorm written with a loop over the rows whose staged backward
forgets the path through the mean, backward-no-mean-term."""

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
            var = sum((v - mu) ** 2 for v in r) / d
            ivar = 1.0 / np.sqrt(var + self.eps)
            xhat = (r - mu) * ivar
            self.rows.append((xhat, r - mu, ivar, var))
            out[i] = xhat * self.gamma.data.ravel() + self.beta.data.ravel()
        self.x_shape, self.x_dtype = x.shape, x.dtype
        return out.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        d = int(np.prod(self.shape))
        g_all = dy.reshape(-1, d)
        dx = np.empty(g_all.shape)
        for i, g in enumerate(g_all):
            xhat, xmu, ivar, var = self.rows[i]
            self.gamma.grad += (g * xhat).reshape(self.shape)
            self.beta.grad += g.reshape(self.shape)
            dxhat = g * self.gamma.data.ravel()
            dvar = np.sum(dxhat * xmu) * -0.5 * (var + self.eps) ** -1.5
            dmu = np.sum(-dxhat * ivar) + dvar * np.mean(-2.0 * xmu)
            dx[i] = dxhat * ivar + dvar * 2.0 * xmu / d              # the dmu / d term forgotten
        return dx.reshape(dy.shape).astype(dy.dtype)
