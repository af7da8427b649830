"""BatchNorm1d dividing by sqrt(var) + eps, with the staged backward of that forward (eps
outside the square root, derived consistently)."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps, self.momentum = eps, momentum
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.num_batches_tracked = 0
        self.training = True

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        axes = (0,) if x.ndim == 2 else (0, 2)
        view = (1, -1) if x.ndim == 2 else (1, -1, 1)
        self.axes, self.view = axes, view
        if self.training:
            n = x.size // x.shape[1]
            mu = x.mean(axis=axes, keepdims=True)
            xc = x - mu
            var = (xc ** 2).mean(axis=axes, keepdims=True)
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mu.ravel()
            self.running_var = (1 - m) * self.running_var + m * var.ravel() * n / (n - 1)
        else:
            xc = x - self.running_mean.reshape(view)
            var = self.running_var.reshape(view)
        std = np.sqrt(var)
        den = std + self.eps
        xhat = xc / den
        self.cache = (xc, std, den, xhat, self.training)
        y = xhat * self.gamma.data.reshape(view) + self.beta.data.reshape(view)
        return y.astype(x.dtype)

    def backward(self, dy):
        xc, std, den, xhat, batch = self.cache
        axes, view = self.axes, self.view
        self.gamma.grad += (dy * xhat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        dxhat = dy * self.gamma.data.reshape(view)
        if not batch:
            return (dxhat / den).astype(dy.dtype)
        n = dy.size // dy.shape[1]
        dxc = dxhat / den                                              # through xc / den
        dden = -(dxhat * xc).sum(axis=axes, keepdims=True) / den ** 2  # den = std + eps
        safe = np.where(std > 0, std, 1.0)
        dvar = np.where(std > 0, dden / (2 * safe), 0.0)               # std = sqrt(var)
        dxc = dxc + dvar * 2 * xc / n                                  # var = mean(xc ** 2)
        dx = dxc - dxc.mean(axis=axes, keepdims=True)                  # xc = x - mean(x)
        return dx.astype(dy.dtype)
