import numpy as np


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum, training):
    if not training:
        X_hat = (X - moving_mean) / np.sqrt(moving_var + eps)
        return gamma * X_hat + beta, moving_mean, moving_var, X_hat, np.sqrt(moving_var + eps)
    if X.ndim == 2:
        mean = X.mean(axis=0)
        var = ((X - mean) ** 2).mean(axis=0)
    else:
        mean = X.mean(axis=(0, 2), keepdims=True)
        var = ((X - mean) ** 2).mean(axis=(0, 2), keepdims=True)
    X_hat = (X - mean) / np.sqrt(var + eps)
    moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
    moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta
    return Y, moving_mean, moving_var, X_hat, np.sqrt(var + eps)


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

    def forward(self, X):
        shape = (1, -1) if X.ndim == 2 else (1, -1, 1)
        mm, mv = self.running_mean.reshape(shape), self.running_var.reshape(shape)
        if self.training:
            self.num_batches_tracked += 1
        # momentum=None: cumulative average
        momentum = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
        Y, mm, mv, self.X_hat, self.std = batch_norm(
            X, self.gamma.data.reshape(shape), self.beta.data.reshape(shape), mm, mv,
            self.eps, momentum, self.training)
        self.running_mean, self.running_var = mm.reshape(-1), mv.reshape(-1)
        return Y

    def backward(self, dY):
        axes = (0,) if dY.ndim == 2 else (0, 2)
        shape = (1, -1) if dY.ndim == 2 else (1, -1, 1)
        self.gamma.grad += (dY * self.X_hat).sum(axis=axes)
        self.beta.grad += dY.sum(axis=axes)
        dX_hat = dY * self.gamma.data.reshape(shape)
        if not self.training:
            return dX_hat / self.std
        return (dX_hat - dX_hat.mean(axis=axes, keepdims=True)
                - self.X_hat * (dX_hat * self.X_hat).mean(axis=axes, keepdims=True)) / self.std
