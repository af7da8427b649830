import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
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
        # (N, C) or (N, C, L): statistics over every axis except the channels
        axes = tuple(i for i in range(x.ndim) if i != 1)
        shape = [1] * x.ndim
        shape[1] = -1
        if self.training:
            mu = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size / x.shape[1]
            self.num_batches_tracked += 1
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mu
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1)
        else:
            mu, var = self.running_mean, self.running_var
        inv_std = 1.0 / np.sqrt(var.reshape(shape) + self.eps)
        x_hat = (x - mu.reshape(shape)) * inv_std
        self.cache = (x_hat, inv_std, axes, shape)
        return self.gamma.data.reshape(shape) * x_hat + self.beta.data.reshape(shape)

    def backward(self, dy):
        x_hat, inv_std, axes, shape = self.cache
        self.gamma.grad += np.sum(dy * x_hat, axis=axes)
        self.beta.grad += np.sum(dy, axis=axes)
        dx_hat = dy * self.gamma.data.reshape(shape)
        if not self.training:
            return dx_hat * inv_std
        m = dy.size / dy.shape[1]
        return inv_std / m * (m * dx_hat - np.sum(dx_hat, axis=axes, keepdims=True)
                              - x_hat * np.sum(dx_hat * x_hat, axis=axes, keepdims=True))
