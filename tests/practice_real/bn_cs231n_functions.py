"""BatchNorm1d, assignment style: batchnorm_forward / batchnorm_backward with a cache tuple."""

import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    """x: (N, D). bn_param: mode, eps, momentum, running_mean, running_var, count."""
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.1)
    running_mean = bn_param["running_mean"]
    running_var = bn_param["running_var"]

    if mode == "train":
        N = x.shape[0]
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        std = np.sqrt(sample_var + eps)
        x_hat = (x - sample_mean) / std
        out = gamma * x_hat + beta
        if bn_param["track"]:
            bn_param["count"] += 1
            m = 1.0 / bn_param["count"] if momentum is None else momentum
            unbiased = sample_var * N / max(N - 1, 1)
            running_mean[:] = (1 - m) * running_mean + m * sample_mean
            running_var[:] = (1 - m) * running_var + m * unbiased
        cache = (x_hat, gamma, std, "train")
    else:
        std = np.sqrt(running_var + eps)
        x_hat = (x - running_mean) / std
        out = gamma * x_hat + beta
        cache = (x_hat, gamma, std, "test")
    return out, cache


def batchnorm_backward(dout, cache):
    x_hat, gamma, std, mode = cache
    N = dout.shape[0]
    dgamma = np.sum(dout * x_hat, axis=0)
    dbeta = np.sum(dout, axis=0)
    dx_hat = dout * gamma
    if mode == "test":
        return dx_hat / std, dgamma, dbeta
    dx = (N * dx_hat - dx_hat.sum(axis=0) - x_hat * np.sum(dx_hat * x_hat, axis=0)) / (N * std)
    return dx, dgamma, dbeta


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
        self.shape = x.shape
        # (N, C, L) -> (N * L, C): every position of a channel is one more sample
        x2 = x.transpose(0, 2, 1).reshape(-1, x.shape[1]) if x.ndim == 3 else x
        C = x.shape[1]
        gamma = self.gamma.data if self.gamma is not None else np.ones(C, x.dtype)
        beta = self.beta.data if self.beta is not None else np.zeros(C, x.dtype)
        use_batch = self.training or not self.track_running_stats
        bn_param = {"mode": "train" if use_batch else "test", "eps": self.eps,
                    "momentum": self.momentum, "running_mean": self.running_mean,
                    "running_var": self.running_var, "count": self.num_batches_tracked,
                    "track": self.training and self.track_running_stats}
        out, self.cache = batchnorm_forward(x2, gamma, beta, bn_param)
        self.num_batches_tracked = bn_param["count"]
        if x.ndim == 3:
            N, C, L = x.shape
            out = out.reshape(N, L, C).transpose(0, 2, 1)
        return out.astype(x.dtype)

    def backward(self, dy):
        dy2 = dy.transpose(0, 2, 1).reshape(-1, dy.shape[1]) if dy.ndim == 3 else dy
        dx, dgamma, dbeta = batchnorm_backward(dy2, self.cache)
        if self.gamma is not None:
            self.gamma.grad += dgamma
            self.beta.grad += dbeta
        if dy.ndim == 3:
            N, C, L = dy.shape
            dx = dx.reshape(N, L, C).transpose(0, 2, 1)
        return dx.astype(dy.dtype)
