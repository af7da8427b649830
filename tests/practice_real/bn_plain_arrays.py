import numpy as np


class BatchNorm1d:
    # gamma / beta are plain arrays here; their gradients live in dgamma / dbeta
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.eps, self.momentum = eps, momentum
        self.gamma = np.ones(num_features, dtype)
        self.beta = np.zeros(num_features, dtype)
        self.dgamma = np.zeros(num_features, dtype)
        self.dbeta = np.zeros(num_features, dtype)
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
        axes = (0,) if x.ndim == 2 else (0, 2)
        view = (1, -1) + (1,) * (x.ndim - 2)
        if self.training:
            mean = x.mean(axis=axes)
            var = x.var(axis=axes)
            n = x.size // x.shape[1]
            self.num_batches_tracked += 1
            m = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        self.rstd = (1.0 / np.sqrt(var + self.eps)).reshape(view)
        self.xhat = (x - mean.reshape(view)) * self.rstd
        self.axes, self.view = axes, view
        return self.gamma.reshape(view) * self.xhat + self.beta.reshape(view)

    def backward(self, dy):
        self.dgamma += (dy * self.xhat).sum(axis=self.axes)
        self.dbeta += dy.sum(axis=self.axes)
        g = dy * self.gamma.reshape(self.view)
        if not self.training:
            return g * self.rstd
        mean_g = g.mean(axis=self.axes, keepdims=True)
        mean_gx = (g * self.xhat).mean(axis=self.axes, keepdims=True)
        return self.rstd * (g - mean_g - self.xhat * mean_gx)
