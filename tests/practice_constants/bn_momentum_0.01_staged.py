"""A BatchNorm1d in the staged (CS231n) style whose running averages decay with a hard-coded
0.99: running = 0.99 * running + 0.01 * batch, i.e. a momentum of 0.01, whatever the argument."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    decay = 0.99

    def __init__(self, num_features, eps=1e-5, momentum=0.1, dtype=np.float64):
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        xc = np.moveaxis(x, 1, -1).reshape(-1, self.num_features)
        if self.training:
            mu = xc.mean(axis=0)
            xmu = xc - mu
            var = (xmu ** 2).mean(axis=0)
            n = xc.shape[0]
            self.running_mean = self.decay * self.running_mean + (1 - self.decay) * mu
            self.running_var = self.decay * self.running_var + (1 - self.decay) * var * n / (n - 1)
        else:
            xmu = xc - self.running_mean
            var = self.running_var
        ivar = 1.0 / np.sqrt(var + self.eps)
        xhat = xmu * ivar
        self.cache = (xhat, xmu, ivar, var, self.training)
        y = xhat * self.gamma.data + self.beta.data
        return np.moveaxis(y.reshape(np.moveaxis(x, 1, -1).shape), -1, 1).astype(x.dtype)

    def backward(self, dy):
        xhat, xmu, ivar, var, training = self.cache
        g = np.moveaxis(dy, 1, -1).reshape(-1, self.num_features)
        self.gamma.grad += (g * xhat).sum(axis=0)
        self.beta.grad += g.sum(axis=0)
        dxhat = g * self.gamma.data
        if training:
            n = g.shape[0]
            dvar = (dxhat * xmu).sum(axis=0) * -0.5 * (var + self.eps) ** -1.5
            dmu = (-dxhat * ivar).sum(axis=0) + dvar * (-2.0 * xmu).mean(axis=0)
            dx = dxhat * ivar + dvar * 2.0 * xmu / n + dmu / n
        else:
            dx = dxhat * ivar
        moved = np.moveaxis(dy, 1, -1).shape
        return np.moveaxis(dx.reshape(moved), -1, 1).astype(dy.dtype)
