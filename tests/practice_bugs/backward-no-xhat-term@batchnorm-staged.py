"""Test fixture: a staged BatchNorm1d (channels moved last) whose backward has the path
through the mean (dmu) but forgets the one through the variance (dvar),
backward-no-xhat-term."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # move the channel axis last and flatten the rest: (n, C)
        xc = np.moveaxis(x, 1, -1).reshape(-1, self.num_features)
        if self.training:
            mu = xc.mean(axis=0)
            xmu = xc - mu
            var = (xmu ** 2).mean(axis=0)
            n = xc.shape[0]
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mu
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            xmu = xc - self.running_mean
            var = self.running_var
        ivar = 1.0 / np.sqrt(var + self.eps)
        xhat = xmu * ivar
        self.cache = (xhat, xmu, ivar, var, x.shape, self.training)
        y = xhat * self.gamma.data + self.beta.data
        return np.moveaxis(y.reshape(np.moveaxis(x, 1, -1).shape), -1, 1).astype(x.dtype)

    def backward(self, dy):
        xhat, xmu, ivar, var, shape, training = self.cache
        g = np.moveaxis(dy, 1, -1).reshape(-1, self.num_features)
        self.gamma.grad += (g * xhat).sum(axis=0)
        self.beta.grad += g.sum(axis=0)
        dxhat = g * self.gamma.data
        if training:
            n = g.shape[0]
            dmu = (-dxhat * ivar).sum(axis=0)       # the path through the mean; none through var
            dx = dxhat * ivar + dmu / n
        else:
            dx = dxhat * ivar
        moved = np.moveaxis(dy, 1, -1).shape
        return np.moveaxis(dx.reshape(moved), -1, 1).astype(dy.dtype)
