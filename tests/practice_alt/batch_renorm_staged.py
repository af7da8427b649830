"""Test fixture: a correct BatchRenorm1d whose backward goes node by node in the staged (dvar,
dmu) style of CS231n, with r and d as constants: the gradient reaching x_hat is dy * gamma * r,
then through the batch's standard deviation and mean. The channels are moved to the last
axis. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchRenorm1d:
    def __init__(self, num_features, r_max=3.0, d_max=5.0, eps=1e-5, momentum=0.1, dtype=np.float64):
        self.C, self.r_max, self.d_max, self.eps, self.momentum = num_features, r_max, d_max, eps, momentum
        self.momentum_arg, self.steps = momentum, 0
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.training = True

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        self.shape = x.shape
        xs = np.moveaxis(x, 1, -1).reshape(-1, self.C)              # (n, C)
        std = np.sqrt(self.running_var + self.eps)
        if not self.training:
            self.stage = ("eval", xs, std)
            out = self.gamma.data * (xs - self.running_mean) / std + self.beta.data
        else:
            mu = xs.mean(axis=0)
            xc = xs - mu
            var = (xc ** 2).mean(axis=0)
            inv = 1.0 / np.sqrt(var + self.eps)
            r = np.clip(np.sqrt(var + self.eps) / std, 1.0 / self.r_max, self.r_max)
            d = np.clip((mu - self.running_mean) / std, -self.d_max, self.d_max)
            xn = xc * inv
            self.stage = ("train", xc, var, inv, xn, r, d)
            out = self.gamma.data * (xn * r + d) + self.beta.data
            n = xs.shape[0]
            self.steps += 1  # momentum=None: the plain average of the batches so far
            self.momentum = 1.0 / self.steps if self.momentum_arg is None else self.momentum_arg
            self.running_mean = (1 - self.momentum) * self.running_mean + self.momentum * mu
            self.running_var = (1 - self.momentum) * self.running_var + self.momentum * var * n / (n - 1)
        out = np.moveaxis(out.reshape(self.shape[:1] + self.shape[2:] + (self.C,)), -1, 1)
        return out.astype(x.dtype)

    def backward(self, dy):
        g = np.moveaxis(dy, 1, -1).reshape(-1, self.C)
        self.beta.grad += g.sum(axis=0)
        if self.stage[0] == "eval":
            _, xs, std = self.stage
            self.gamma.grad += (g * (xs - self.running_mean) / std).sum(axis=0)
            dxs = g * self.gamma.data / std
        else:
            _, xc, var, inv, xn, r, d = self.stage
            n = xc.shape[0]
            self.gamma.grad += (g * (xn * r + d)).sum(axis=0)
            dxn = g * self.gamma.data * r
            dvar = (dxn * xc).sum(axis=0) * -0.5 * inv ** 3
            dmu = -(dxn * inv).sum(axis=0) + dvar * (-2.0 * xc).mean(axis=0)
            dxs = dxn * inv + dvar * 2.0 * xc / n + dmu / n
        dx = np.moveaxis(dxs.reshape(self.shape[:1] + self.shape[2:] + (self.C,)), -1, 1)
        return dx.astype(dy.dtype)
