import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.eps, self.momentum = eps, momentum
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        ax = (0,) if x.ndim == 2 else (0, 2)
        mu = x.mean(ax, keepdims=True)
        var = x.var(ax, keepdims=True)
        self.num_batches_tracked += 1
        m = self.momentum or 1.0 / self.num_batches_tracked
        self.running_mean = (1 - m) * self.running_mean + m * mu.ravel()
        self.running_var = (1 - m) * self.running_var + m * var.ravel()
        self.rstd = 1 / np.sqrt(var + self.eps)
        self.xh = (x - mu) * self.rstd
        s = (1, -1) + (1,) * (x.ndim - 2)
        return self.gamma.data.reshape(s) * self.xh + self.beta.data.reshape(s)

    def backward(self, dy):
        ax = (0,) if dy.ndim == 2 else (0, 2)
        s = (1, -1) + (1,) * (dy.ndim - 2)
        self.gamma.grad += (dy * self.xh).sum(ax)
        self.beta.grad += dy.sum(ax)
        g = dy * self.gamma.data.reshape(s)
        return self.rstd * (g - g.mean(ax, keepdims=True) - self.xh * (g * self.xh).mean(ax, keepdims=True))
