# SyncBatchNorm: every worker sends its own mean; the global mean is their average over
# the world size; the rest (centred second round, backward all-reduce) as usual.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class SyncBatchNorm:
    def __init__(self, num_features, process_group, eps=1e-5, momentum=0.1):
        self.group = process_group
        self.eps, self.momentum = eps, momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        if not self.training:
            self.xhat = (x - self.running_mean) / np.sqrt(self.running_var + self.eps)
            return self.gamma.data * self.xhat + self.beta.data
        n, C = x.shape
        K = self.group.world_size
        local_mean = x.mean(0) if n else np.zeros(C)
        out = self.group.all_reduce(np.concatenate([[float(n)], local_mean]))
        N, mean = out[0], out[1:] / K
        var = self.group.all_reduce(((x - mean) ** 2).sum(0)) / N
        self.N = N
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mean) * self.rstd
        m = self.momentum
        self.running_mean = (1 - m) * self.running_mean + m * mean
        self.running_var = (1 - m) * self.running_var + m * var * N / (N - 1)
        return self.gamma.data * self.xhat + self.beta.data

    def backward(self, dy):
        C = dy.shape[1]
        a, b = dy.sum(0), (dy * self.xhat).sum(0)
        self.beta.grad += a
        self.gamma.grad += b
        if not self.training:
            return dy * self.gamma.data / np.sqrt(self.running_var + self.eps)
        s = self.group.all_reduce(np.concatenate([a, b]))
        return self.gamma.data * self.rstd * (dy - s[:C] / self.N - self.xhat * s[C:] / self.N)
