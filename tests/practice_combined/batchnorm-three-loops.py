"""BatchNorm1d channel by channel with loops, as in a whiteboard answer: momentum on the old
running value, running_var updated with the biased variance, batch statistics in eval too."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.c = num_features
        self.eps, self.momentum = eps, momentum
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.training = True

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def _channel(self, x, j):
        return x[:, j].ravel()

    def forward(self, x):
        if self.training:
            self.t = getattr(self, "t", 0) + 1
        mom = self.momentum if self.momentum is not None else 1.0 / self.t
        y = np.empty(x.shape)
        self.saved = []
        for j in range(self.c):
            v = self._channel(x, j)
            n = len(v)
            mean = sum(v) / n
            var = sum((t - mean) ** 2 for t in v) / n
            if self.training:
                self.running_mean[j] = mom * self.running_mean[j] + (1 - mom) * mean
                self.running_var[j] = mom * self.running_var[j] + (1 - mom) * var
            inv = 1.0 / np.sqrt(var + self.eps)
            xhat = (v - mean) * inv
            self.saved.append((xhat, inv))
            y[:, j] = (self.gamma.data[j] * xhat + self.beta.data[j]).reshape(x[:, j].shape)
        return y.astype(x.dtype)

    def backward(self, dy):
        dx = np.empty(dy.shape)
        for j in range(self.c):
            g = self._channel(dy, j)
            xhat, inv = self.saved[j]
            n = len(g)
            self.gamma.grad[j] += sum(g * xhat)
            self.beta.grad[j] += sum(g)
            gh = g * self.gamma.data[j]
            d = inv * (gh - sum(gh) / n - xhat * sum(gh * xhat) / n)
            dx[:, j] = d.reshape(dy[:, j].shape)
        return dx.astype(dy.dtype)
