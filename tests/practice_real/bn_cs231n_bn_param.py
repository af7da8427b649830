import numpy as np


def batchnorm_forward(x, gamma, beta, bn_param):
    mode = bn_param["mode"]
    eps = bn_param.get("eps", 1e-5)
    momentum = bn_param.get("momentum", 0.1)
    N, D = x.shape
    running_mean = bn_param.get("running_mean", np.zeros(D, dtype=x.dtype))
    running_var = bn_param.get("running_var", np.ones(D, dtype=x.dtype))

    if mode == "train":
        mu = np.mean(x, axis=0)
        var = np.var(x, axis=0)
        inv = 1.0 / np.sqrt(var + eps)
        xn = (x - mu) * inv
        out = gamma * xn + beta
        running_mean = (1 - momentum) * running_mean + momentum * mu
        running_var = (1 - momentum) * running_var + momentum * var * N / (N - 1)
        cache = (xn, gamma, inv)
    elif mode == "test":
        inv = 1.0 / np.sqrt(running_var + eps)
        xn = (x - running_mean) * inv
        out = gamma * xn + beta
        cache = (xn, gamma, inv)
    else:
        raise ValueError(f'Invalid forward batchnorm mode "{mode}"')
    return out, cache


def batchnorm_backward_alt(dout, cache):
    xn, gamma, inv = cache
    N = dout.shape[0]
    dgamma = np.sum(dout * xn, axis=0)
    dbeta = np.sum(dout, axis=0)
    dxn = dout * gamma
    dx = inv / N * (N * dxn - dxn.sum(axis=0) - xn * (dxn * xn).sum(axis=0))
    return dx, dgamma, dbeta


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.bn_param = {"mode": "train", "eps": eps, "momentum": momentum,
                         "running_mean": np.zeros(num_features, dtype),
                         "running_var": np.ones(num_features, dtype)}
        self.num_batches_tracked = 0
        self.training = True

    @property
    def running_mean(self):
        return self.bn_param["running_mean"]

    @property
    def running_var(self):
        return self.bn_param["running_var"]

    def train(self, mode=True):
        self.training = mode
        self.bn_param["mode"] = "train" if mode else "test"
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.ndim = x.ndim
        if x.ndim == 3:
            N, C, L = x.shape
            x = x.transpose(0, 2, 1).reshape(N * L, C)
            self.NCL = (N, C, L)
        if self.training:
            self.num_batches_tracked += 1
        param = dict(self.bn_param)
        if param["momentum"] is None:
            param["momentum"] = 1.0 / max(self.num_batches_tracked, 1)
        out, self.cache = batchnorm_forward(x, self.gamma.data, self.beta.data, param)
        if self.ndim == 3:
            N, C, L = self.NCL
            out = out.reshape(N, L, C).transpose(0, 2, 1)
        return out

    def backward(self, dout):
        if self.ndim == 3:
            N, C, L = self.NCL
            dout = dout.transpose(0, 2, 1).reshape(N * L, C)
        if self.training:
            dx, dgamma, dbeta = batchnorm_backward_alt(dout, self.cache)
        else:
            xn, gamma, inv = self.cache
            dx, dgamma, dbeta = dout * gamma * inv, np.sum(dout * xn, 0), np.sum(dout, 0)
        self.gamma.grad += dgamma
        self.beta.grad += dbeta
        if self.ndim == 3:
            dx = dx.reshape(N, L, C).transpose(0, 2, 1)
        return dx
