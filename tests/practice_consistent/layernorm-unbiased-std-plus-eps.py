"""LayerNorm dividing by the unbiased std (n - 1) plus eps, with the backward derived for that
forward through d = sigma + eps and sigma = sqrt(sum(xc ** 2) / (n - 1)): two forward mistakes
(var-unbiased-in-normalization, eps-outside-sqrt), both differentiated consistently."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.gamma = Parameter(np.ones(self.shape))
        self.beta = Parameter(np.zeros(self.shape))

    def forward(self, x):
        axes = tuple(range(x.ndim - len(self.shape), x.ndim))
        self.axes = axes
        mu = x.mean(axis=axes, keepdims=True)
        self.xc = x - mu
        n = np.prod([x.shape[a] for a in axes])
        self.sigma = np.sqrt((self.xc ** 2).sum(axis=axes, keepdims=True) / (n - 1))
        self.d = self.sigma + self.eps
        self.xhat = self.xc / self.d
        return (self.xhat * self.gamma.data + self.beta.data).astype(x.dtype)

    def backward(self, dy):
        axes = self.axes
        lead = tuple(range(dy.ndim - len(self.shape)))
        self.gamma.grad += (dy * self.xhat).sum(axis=lead)
        self.beta.grad += dy.sum(axis=lead)
        g = dy * self.gamma.data
        n = np.prod([dy.shape[a] for a in axes])
        # y = xc / d, d = sigma + eps, dsigma/dx = xc / (n sigma)
        dd = -(g * self.xc).sum(axis=axes, keepdims=True) / self.d ** 2
        sig = np.where(self.sigma > 0, self.sigma, 1.0)
        dxc = g / self.d + dd * np.where(self.sigma > 0, self.xc / ((n - 1) * sig), 0.0)
        dx = dxc - dxc.mean(axis=axes, keepdims=True)
        return dx.astype(dy.dtype)
