"""Test fixture: a correct BatchRenorm1d written with a Python loop over the channels, its
parameters named weight and bias, r and d computed as Python floats (so they are constants
in the backward by construction) and the compact BatchNorm backward per channel. The grader
must pass it.
"""

import math

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchRenorm1d:
    def __init__(self, num_features, r_max=3.0, d_max=5.0, eps=1e-5, momentum=0.1):
        self.C, self.r_max, self.d_max, self.eps, self.momentum = num_features, r_max, d_max, eps, momentum
        self.momentum_arg, self.steps = momentum, 0
        self.weight = Parameter(np.ones(num_features))
        self.bias = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.training = True

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        y = np.empty(x.shape)
        if self.training:  # momentum=None: the plain average of the batches so far
            self.steps += 1
            self.momentum = 1.0 / self.steps if self.momentum_arg is None else self.momentum_arg
        self.saved = []
        for c in range(self.C):
            xc = x[:, c].astype(np.float64)
            sigma = math.sqrt(self.running_var[c] + self.eps)
            if self.training:
                mean, var = float(xc.mean()), float(((xc - xc.mean()) ** 2).mean())
                sigma_b = math.sqrt(var + self.eps)
                r = min(max(sigma_b / sigma, 1.0 / self.r_max), self.r_max)
                d = min(max((mean - self.running_mean[c]) / sigma, -self.d_max), self.d_max)
                x_hat = (xc - mean) / sigma_b
                n = xc.size
                self.running_mean[c] += self.momentum * (mean - self.running_mean[c])
                self.running_var[c] += self.momentum * (var * n / (n - 1) - self.running_var[c])
            else:
                sigma_b, r, d = sigma, 1.0, 0.0
                x_hat = (xc - self.running_mean[c]) / sigma
            self.saved.append((x_hat, sigma_b, r, d))
            y[:, c] = self.weight.data[c] * (x_hat * r + d) + self.bias.data[c]
        return y.astype(x.dtype)

    def backward(self, dy):
        dx = np.empty(dy.shape)
        for c, (x_hat, sigma_b, r, d) in enumerate(self.saved):
            g = dy[:, c].astype(np.float64)
            self.weight.grad[c] += (g * (x_hat * r + d)).sum()
            self.bias.grad[c] += g.sum()
            dx_hat = g * self.weight.data[c] * r
            if self.training:
                dx_hat = dx_hat - dx_hat.mean() - x_hat * (dx_hat * x_hat).mean()
            dx[:, c] = dx_hat / sigma_b
        return dx.astype(dy.dtype)
