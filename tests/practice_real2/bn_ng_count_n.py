# BatchNorm1d with the statistics over (N, L) and a backward written with sums divided by
# the batch size m = x.shape[0].
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.track_running_stats = track_running_stats
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
        axes = (0,) if x.ndim == 2 else (0, 2)
        shape = (1, -1) if x.ndim == 2 else (1, -1, 1)
        if self.training:
            mu = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // x.shape[1]
            self.num_batches_tracked += 1
            m = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            self.running_mean = (1 - m) * self.running_mean + m * mu
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            mu, var = self.running_mean, self.running_var
        self.axes, self.bshape = axes, shape
        self.inv_std = (1.0 / np.sqrt(var + self.eps)).reshape(shape)
        self.x_hat = (x - mu.reshape(shape)) * self.inv_std
        return self.gamma.data.reshape(shape) * self.x_hat + self.beta.data.reshape(shape)

    def backward(self, dy):
        axes, shape = self.axes, self.bshape
        self.gamma.grad += (dy * self.x_hat).sum(axis=axes)
        self.beta.grad += dy.sum(axis=axes)
        dx_hat = dy * self.gamma.data.reshape(shape)
        if not self.training:
            return dx_hat * self.inv_std
        m = dy.shape[0]
        return self.inv_std / m * (m * dx_hat - dx_hat.sum(axis=axes, keepdims=True)
                                   - self.x_hat * (dx_hat * self.x_hat).sum(axis=axes, keepdims=True))
