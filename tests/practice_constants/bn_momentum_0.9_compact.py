"""A BatchNorm1d whose running update hard-codes the new batch's weight 0.9, whatever momentum
it was built with (written as running = 0.1 * running + 0.9 * batch)."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, dtype=np.float64):
        self.eps, self.momentum, self.training = eps, momentum, True
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
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mean, var = x.mean(axis=axes, keepdims=True), x.var(axis=axes, keepdims=True)
            n = x.size // x.shape[1]
            self.running_mean = 0.1 * self.running_mean + 0.9 * mean.ravel()
            self.running_var = 0.1 * self.running_var + 0.9 * var.ravel() * n / (n - 1)
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.x_hat, self.axes, self.batch = (x - mean) * self.rstd, axes, self.training
        return (self.gamma.data.reshape(shape) * self.x_hat + self.beta.data.reshape(shape)).astype(x.dtype)

    def backward(self, dy):
        axes, x_hat = self.axes, self.x_hat
        shape = (1, -1) + (1,) * (dy.ndim - 2)
        self.gamma.grad += (dy * x_hat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        g = dy * self.gamma.data.reshape(shape)
        if not self.batch:
            return (self.rstd * g).astype(dy.dtype)
        dx = self.rstd * (g - g.mean(axis=axes, keepdims=True)
                          - x_hat * (g * x_hat).mean(axis=axes, keepdims=True))
        return dx.astype(dy.dtype)
