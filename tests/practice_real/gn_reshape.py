import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        assert num_channels % num_groups == 0
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

    def forward(self, x):
        N, C = x.shape[:2]
        G = self.num_groups
        xg = x.reshape(N, G, -1)                 # each group: C/G channels times the spatial positions
        mean = xg.mean(axis=2, keepdims=True)
        var = xg.var(axis=2, keepdims=True)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = ((xg - mean) * self.rstd).reshape(x.shape)
        cshape = (1, C) + (1,) * (x.ndim - 2)
        return self.xhat * self.gamma.data.reshape(cshape) + self.beta.data.reshape(cshape)

    def backward(self, dy):
        N, C = dy.shape[:2]
        G = self.num_groups
        red = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * self.xhat).sum(axis=red)
        self.beta.grad += dy.sum(axis=red)
        cshape = (1, C) + (1,) * (dy.ndim - 2)
        g = (dy * self.gamma.data.reshape(cshape)).reshape(N, G, -1)
        xh = self.xhat.reshape(N, G, -1)
        dx = self.rstd * (g - g.mean(axis=2, keepdims=True) - xh * (g * xh).mean(axis=2, keepdims=True))
        return dx.reshape(dy.shape)
