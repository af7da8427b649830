# 手撕 SyncBatchNorm：一次 all_reduce 同时汇总 count、sum(x)、sum(x^2)
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
        n, C = x.shape
        if self.training:
            # 一轮通信：[n, sum(x), sum(x^2)]
            buf = np.concatenate([[float(n)], x.sum(0), (x * x).sum(0)])
            tot = self.group.all_reduce(buf)
            N = tot[0]
            mean = tot[1:1 + C] / N
            var = tot[1 + C:] / N - mean ** 2          # E[x^2] - E[x]^2
            self.N = N
            m = self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * N / (N - 1)   # 无偏
        else:
            mean, var = self.running_mean, self.running_var
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mean) * self.rstd
        return self.gamma.data * self.xhat + self.beta.data

    def backward(self, dy):
        C = dy.shape[1]
        s1 = dy.sum(0)
        s2 = (dy * self.xhat).sum(0)
        self.beta.grad += s1            # 本地的梯度，不做 all_reduce
        self.gamma.grad += s2
        if not self.training:
            return dy * self.gamma.data * self.rstd
        t = self.group.all_reduce(np.concatenate([s1, s2]))
        return self.gamma.data * self.rstd * (dy - t[:C] / self.N - self.xhat * t[C:] / self.N)
