"""BatchNorm1d with the staged (computational graph) backward, 9 steps as in the CS231n notes;
running averages with the momentum on the old value, running_var from the biased variance,
and the batch statistics in evaluation as in training."""

import numpy as np


class Param:
    def __init__(self, value):
        self.data = value
        self.grad = np.zeros_like(value)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        self.C = num_features
        self.eps = eps
        self.momentum = momentum
        self.gamma = Param(np.ones(num_features))
        self.beta = Param(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)
        self.training = True
        self.steps = 0

    def train(self):
        self.training = True

    def eval(self):
        self.training = False

    def _to2d(self, x):
        if x.ndim == 3:
            n, c, length = x.shape
            return x.transpose(0, 2, 1).reshape(n * length, c)
        return x

    def _from2d(self, y, like):
        if like.ndim == 3:
            n, c, length = like.shape
            return y.reshape(n, length, c).transpose(0, 2, 1)
        return y

    def forward(self, x):
        self.like = x
        h = self._to2d(x)
        N = h.shape[0]
        # step 1-7
        mu = 1.0 / N * np.sum(h, axis=0)
        xmu = h - mu
        sq = xmu ** 2
        var = 1.0 / N * np.sum(sq, axis=0)
        sqrtvar = np.sqrt(var + self.eps)
        ivar = 1.0 / sqrtvar
        xhat = xmu * ivar
        out = self.gamma.data * xhat + self.beta.data
        if self.training:
            self.steps += 1
            mom = 1.0 / self.steps if self.momentum is None else self.momentum  # cumulative average
            self.running_mean = mom * self.running_mean + (1.0 - mom) * mu
            self.running_var = mom * self.running_var + (1.0 - mom) * var
        self.cache = (xhat, xmu, ivar, sqrtvar, var)
        return self._from2d(out, x).astype(x.dtype)

    def backward(self, dout):
        xhat, xmu, ivar, sqrtvar, var = self.cache
        d = self._to2d(dout)
        N = d.shape[0]
        self.beta.grad += np.sum(d, axis=0)
        self.gamma.grad += np.sum(d * xhat, axis=0)
        dxhat = d * self.gamma.data
        divar = np.sum(dxhat * xmu, axis=0)
        dxmu1 = dxhat * ivar
        dsqrtvar = -1.0 / (sqrtvar ** 2) * divar
        dvar = 0.5 * 1.0 / np.sqrt(var + self.eps) * dsqrtvar
        dsq = 1.0 / N * np.ones_like(d) * dvar
        dxmu2 = 2 * xmu * dsq
        dx1 = dxmu1 + dxmu2
        dmu = -1 * np.sum(dx1, axis=0)
        dx2 = 1.0 / N * np.ones_like(d) * dmu
        dx = dx1 + dx2
        return self._from2d(dx, self.like).astype(dout.dtype)
