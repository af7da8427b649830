# GroupNorm written from a LayerNorm the author already had: reshape the channels into
# groups and normalise over the group's channels, keepdims everywhere.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype))
        self.beta = Parameter(np.zeros(num_channels, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _bshape(self, x):
        return (1, self.num_channels) + (1,) * (x.ndim - 2)

    def forward(self, x):
        N, C, *spatial = x.shape
        G = self.num_groups
        xg = x.reshape(N, G, C // G, *spatial)
        mean = xg.mean(axis=2, keepdims=True)
        var = ((xg - mean) ** 2).mean(axis=2, keepdims=True)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (xg - mean) * self.rstd
        xhat = self.xhat.reshape(x.shape)
        return self.gamma.data.reshape(self._bshape(x)) * xhat + self.beta.data.reshape(self._bshape(x))

    def backward(self, dy):
        N, C, *spatial = dy.shape
        G = self.num_groups
        xhat = self.xhat.reshape(dy.shape)
        red = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * xhat).sum(red)
        self.beta.grad += dy.sum(red)
        g = (dy * self.gamma.data.reshape(self._bshape(dy))).reshape(N, G, C // G, *spatial)
        dx = self.rstd * (g - g.mean(axis=2, keepdims=True)
                          - self.xhat * (g * self.xhat).mean(axis=2, keepdims=True))
        return dx.reshape(dy.shape)
