import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.eps = eps
        self.momentum = momentum
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

    def _affine(self, x):
        # gamma and beta live on the channel axis (axis 1)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        return self.gamma.data.reshape(shape), self.beta.data.reshape(shape)

    def forward(self, x):
        gamma, beta = self._affine(x)
        if self.training:
            mean = x.mean(axis=0)
            var = x.var(axis=0)
            n = x.shape[0]
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * (mean if x.ndim == 2 else mean.mean(-1))
            unbiased = var * n / (n - 1)
            self.running_var = (1 - m) * self.running_var + m * (unbiased if x.ndim == 2 else unbiased.mean(-1))
        else:
            shape = (-1,) + (1,) * (x.ndim - 2)
            mean = self.running_mean.reshape(shape)
            var = self.running_var.reshape(shape)
        self.std = np.sqrt(var + self.eps)
        self.xhat = (x - mean) / self.std
        return gamma * self.xhat + beta

    def backward(self, dy):
        gamma, _ = self._affine(dy)
        sum_axes = (0,) if dy.ndim == 2 else (0, 2)
        self.gamma.grad += (dy * self.xhat).sum(axis=sum_axes)
        self.beta.grad += dy.sum(axis=sum_axes)
        g = dy * gamma
        if not self.training:
            return g / self.std
        return (g - g.mean(axis=0) - self.xhat * (g * self.xhat).mean(axis=0)) / self.std
