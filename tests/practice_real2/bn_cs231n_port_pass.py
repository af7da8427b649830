# BatchNorm1d ported from the classic (N, D) assignment code: an (N, C, L) input is moved
# to (N*L, C) first, so one 2-D batchnorm_forward / batchnorm_backward does everything.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param["eps"]
    if mode == "train":
        sample_mean = x.mean(axis=0)
        sample_var = x.var(axis=0)
        x_hat = (x - sample_mean) / np.sqrt(sample_var + eps)
        out = gamma * x_hat + beta
        cache = ("train", x_hat, gamma, sample_var, eps)
        return out, cache, sample_mean, sample_var
    x_hat = (x - bn_param["running_mean"]) / np.sqrt(bn_param["running_var"] + eps)
    cache = ("eval", x_hat, gamma, bn_param["running_var"], eps)
    return gamma * x_hat + beta, cache, None, None


def batchnorm_backward(dout, cache):
    mode, x_hat, gamma, var, eps = cache
    N = dout.shape[0]
    dgamma = np.sum(dout * x_hat, axis=0)
    dbeta = np.sum(dout, axis=0)
    dx_hat = dout * gamma
    inv_std = 1.0 / np.sqrt(var + eps)
    if mode == "eval":
        return dx_hat * inv_std, dgamma, dbeta
    dx = inv_std / N * (N * dx_hat - dx_hat.sum(axis=0) - x_hat * (dx_hat * x_hat).sum(axis=0))
    return dx, dgamma, dbeta


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

    @staticmethod
    def _to2d(x):
        if x.ndim == 2:
            return x
        return x.transpose(0, 2, 1).reshape(-1, x.shape[1])

    @staticmethod
    def _from2d(x2, shape):
        if len(shape) == 2:
            return x2
        N, C, L = shape
        return x2.reshape(N, L, C).transpose(0, 2, 1)

    def forward(self, x):
        self.shape = x.shape
        x2 = self._to2d(x)
        bn_param = {"mode": "train" if self.training else "eval", "eps": self.eps,
                    "running_mean": self.running_mean, "running_var": self.running_var}
        out, self.cache, mean, var = batchnorm_forward(x2, self.gamma.data, self.beta.data, bn_param)
        if self.training:
            n = x2.shape[0]
            self.num_batches_tracked += 1
            m = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        return self._from2d(out, x.shape)

    def backward(self, dy):
        dx2, dgamma, dbeta = batchnorm_backward(self._to2d(dy), self.cache)
        self.gamma.grad += dgamma
        self.beta.grad += dbeta
        return self._from2d(dx2, self.shape)
