"""Test fixture: a BatchNorm1d written for (B, T, D) activations: the input is turned to
(N, L, C) and its statistics are taken with mean(axis=0), one per (position, channel), their
average over the positions feeding the running statistics; bn-stats-per-position."""

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
        h = np.moveaxis(x, 1, -1)                       # (N, C) or (N, L, C), like (B, T, D)
        if self.training:
            mu = h.mean(axis=0)                         # (C,) or (L, C): over the batch only
            var = ((h - mu) ** 2).mean(axis=0)
            n = x.size // self.num_features
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
            per_channel_mu = mu.reshape(-1, self.num_features).mean(axis=0)
            per_channel_var = var.reshape(-1, self.num_features).mean(axis=0)
            self.running_mean = (1 - m) * self.running_mean + m * per_channel_mu
            self.running_var = (1 - m) * self.running_var + m * per_channel_var * n / (n - 1)
        else:
            mu, var = self.running_mean, self.running_var
        inv = 1.0 / np.sqrt(var + self.eps)
        xhat = (h - mu) * inv
        self.cache = (xhat, inv, self.training)
        y = xhat * self.gamma.data + self.beta.data
        return np.moveaxis(y, -1, 1).astype(x.dtype)

    def backward(self, dy):
        xhat, inv, training = self.cache
        g = np.moveaxis(dy, 1, -1)
        lead = tuple(range(g.ndim - 1))
        self.gamma.grad += (g * xhat).sum(axis=lead)
        self.beta.grad += g.sum(axis=lead)
        gx = g * self.gamma.data
        if training:
            dx = inv * (gx - gx.mean(axis=0) - xhat * (gx * xhat).mean(axis=0))
        else:
            dx = inv * gx
        return np.moveaxis(dx, -1, 1).astype(dy.dtype)
