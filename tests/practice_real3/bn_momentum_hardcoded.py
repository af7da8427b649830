"""BatchNorm1d by hand: the running statistics blend with a fixed 0.9 / 0.1."""
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
        self.track_running_stats = track_running_stats
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype)) if affine else None
        self.beta = Parameter(np.zeros(num_features, dtype)) if affine else None
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
        shp = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mu = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // x.shape[1]
            # keep 90% of the old statistics, take 10% of the new batch
            self.running_mean = 0.9 * self.running_mean + 0.1 * mu
            self.running_var = 0.9 * self.running_var + 0.1 * var * n / (n - 1)
            self.num_batches_tracked += 1
        else:
            mu, var = self.running_mean, self.running_var
        self.axes = axes
        self.rstd = (1.0 / np.sqrt(var + self.eps)).reshape(shp)
        self.xhat = (x - mu.reshape(shp)) * self.rstd
        self.shp = shp
        return self.gamma.data.reshape(shp) * self.xhat + self.beta.data.reshape(shp)

    def backward(self, dy):
        self.gamma.grad += (dy * self.xhat).sum(axis=self.axes)
        self.beta.grad += dy.sum(axis=self.axes)
        dxhat = dy * self.gamma.data.reshape(self.shp)
        if not self.training:
            return dxhat * self.rstd
        m1 = dxhat.mean(axis=self.axes, keepdims=True)
        m2 = (dxhat * self.xhat).mean(axis=self.axes, keepdims=True)
        return self.rstd * (dxhat - m1 - self.xhat * m2)
