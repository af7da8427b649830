import numpy as np


class Parameter:
    def __init__(self, data):
        self.data, self.grad = data, np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.eps, self.momentum, self.training = eps, momentum, True
        self.gamma, self.beta = Parameter(np.ones(num_features, dtype)), Parameter(np.zeros(num_features, dtype))
        self.running_mean, self.running_var = np.zeros(num_features, dtype), np.ones(num_features, dtype)
        self.num_batches_tracked = 0

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        ax, sh = ((0,), (1, -1)) if x.ndim == 2 else ((0, 2), (1, -1, 1))
        if self.training:
            mu, var, n = x.mean(ax), x.var(ax), x.size // x.shape[1]
            self.num_batches_tracked += 1
            d = self.momentum if self.momentum is not None else 1 - 1 / self.num_batches_tracked
            self.running_mean = d * self.running_mean + (1 - d) * mu
            self.running_var = d * self.running_var + (1 - d) * var * n / (n - 1)
        else:
            mu, var = self.running_mean, self.running_var
        self.ax, self.sh = ax, sh
        self.r = 1 / np.sqrt(var + self.eps).reshape(sh)
        self.xh = (x - mu.reshape(sh)) * self.r
        return self.gamma.data.reshape(sh) * self.xh + self.beta.data.reshape(sh)

    def backward(self, dy):
        ax, sh, xh = self.ax, self.sh, self.xh
        self.gamma.grad += (dy * xh).sum(ax)
        self.beta.grad += dy.sum(ax)
        g = dy * self.gamma.data.reshape(sh)
        if not self.training:
            return g * self.r
        return self.r * (g - g.mean(ax, keepdims=True) - xh * (g * xh).mean(ax, keepdims=True))
