"""Test fixture: a correct SyncBatchNorm with a staged backward (dvar, then dmean, as in a
makemore-style derivation), every sum over the batch an all-reduce of the workers' sums. The
forward takes two rounds: [n_k, sum x_k], then the sum of squared deviations from the global
mean. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data, self.grad = data, np.zeros_like(data)


class SyncBatchNorm:
    def __init__(self, num_features, process_group, eps=1e-5, momentum=0.1):
        self.group, self.eps, self.momentum = process_group, eps, momentum
        self.training = True
        self.gamma, self.beta = Parameter(np.ones(num_features)), Parameter(np.zeros(num_features))
        self.running_mean, self.running_var = np.zeros(num_features), np.ones(num_features)

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        if not self.training:
            return self.gamma.data * (x - self.running_mean) / np.sqrt(self.running_var + self.eps) + self.beta.data
        first = self.group.all_reduce(np.append(float(x.shape[0]), x.sum(axis=0)))
        N, mu = first[0], first[1:] / first[0]
        xmu = x - mu
        var = self.group.all_reduce((xmu * xmu).sum(axis=0)) / N
        m = self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mu
        self.running_var = (1 - m) * self.running_var + m * var * (N / (N - 1))
        std = np.sqrt(var + self.eps)
        self.saved = (xmu, std, N)
        return self.gamma.data * (xmu / std) + self.beta.data

    def backward(self, dy):
        xmu, std, N = self.saved
        C = xmu.shape[1]
        self.gamma.grad += (dy * xmu / std).sum(axis=0)
        self.beta.grad += dy.sum(axis=0)
        dxhat = dy * self.gamma.data
        sums = self.group.all_reduce(np.concatenate([(dxhat * xmu).sum(axis=0), dxhat.sum(axis=0),
                                                     xmu.sum(axis=0)]))
        dvar = -0.5 * sums[:C] / std ** 3
        dmu = -sums[C:2 * C] / std - 2.0 * dvar * sums[2 * C:] / N
        return dxhat / std + dvar * 2.0 * xmu / N + dmu / N
