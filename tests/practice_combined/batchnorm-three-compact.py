"""手撕 BatchNorm1d, compact: the running statistics kept with momentum as the weight of the old
value (0.9 convention), the biased batch variance put in running_var, and the batch's
statistics used in evaluation too; momentum=None (the cumulative average) is not supported
either, a fourth mistake."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.eps, self.momentum, self.training = eps, momentum, True
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def forward(self, x):
        axes = (0,) if x.ndim == 2 else (0, 2)
        shape = (1, -1) if x.ndim == 2 else (1, -1, 1)
        mu = x.mean(axis=axes)
        var = x.var(axis=axes)
        if self.training:
            m = self.momentum
            self.running_mean = m * self.running_mean + (1 - m) * mu
            self.running_var = m * self.running_var + (1 - m) * var
        self.std_inv = 1 / np.sqrt(var.reshape(shape) + self.eps)
        self.xhat = (x - mu.reshape(shape)) * self.std_inv
        self.axes, self.shape = axes, shape
        out = self.gamma.data.reshape(shape) * self.xhat + self.beta.data.reshape(shape)
        return out.astype(x.dtype)

    def backward(self, dout):
        ax, shape = self.axes, self.shape
        self.gamma.grad += (dout * self.xhat).sum(axis=ax)
        self.beta.grad += dout.sum(axis=ax)
        g = dout * self.gamma.data.reshape(shape)
        dx = self.std_inv * (g - g.mean(axis=ax, keepdims=True)
                             - self.xhat * (g * self.xhat).mean(axis=ax, keepdims=True))
        return dx.astype(dout.dtype)
