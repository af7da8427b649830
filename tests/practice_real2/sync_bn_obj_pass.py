# SyncBatchNorm with a small Stats helper: the forward gathers the count and the sum, then
# the centred sum of squares (two all-reduces, no cancellation); one more in the backward.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GlobalStats:
    """Mean and biased/unbiased variance of the whole batch, from the workers' shards."""

    def __init__(self, group, x):
        C = x.shape[1]
        head = group.all_reduce(np.concatenate([[float(x.shape[0])], x.sum(0)]))
        self.count = head[0]
        self.mean = head[1:] / self.count
        self.m2 = group.all_reduce(((x - self.mean) ** 2).sum(0).reshape(C))

    @property
    def var(self):
        return self.m2 / self.count

    @property
    def unbiased_var(self):
        return self.m2 / (self.count - 1)


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
        if self.training:
            st = GlobalStats(self.group, x)
            mean, var, self.count = st.mean, st.var, st.count
            m = self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * st.unbiased_var
        else:
            mean, var = self.running_mean, self.running_var
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mean) * self.rstd
        return self.gamma.data * self.xhat + self.beta.data

    def backward(self, dy):
        sum_dy = dy.sum(0)
        sum_dy_xhat = (dy * self.xhat).sum(0)
        self.beta.grad += sum_dy
        self.gamma.grad += sum_dy_xhat
        g = self.gamma.data * self.rstd
        if not self.training:
            return g * dy
        tot = self.group.all_reduce(np.concatenate([sum_dy, sum_dy_xhat]))
        C = dy.shape[1]
        mean_dy, mean_dy_xhat = tot[:C] / self.count, tot[C:] / self.count
        return g * (dy - mean_dy - self.xhat * mean_dy_xhat)
