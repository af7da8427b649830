# 手撕 GroupNorm（面试版）
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

    def forward(self, x):
        N, C = x.shape[:2]
        G = self.num_groups
        rest = x.shape[2:]
        # 把通道拆成 (C//G, G)，然后把组这一维挪到前面
        xr = x.reshape(N, C // G, G, *rest)
        xr = np.moveaxis(xr, 2, 1)                   # (N, G, C//G, *rest)
        axes = tuple(range(2, xr.ndim))              # 每组内部所有元素
        mu = xr.mean(axis=axes, keepdims=True)
        var = xr.var(axis=axes, keepdims=True)       # 有偏方差
        rstd = 1.0 / np.sqrt(var + self.eps)         # eps 在根号里面
        xhat = (xr - mu) * rstd
        xhat = np.moveaxis(xhat, 1, 2).reshape(x.shape)  # 变回原来的形状
        shp = (1, C) + (1,) * len(rest)
        self.cache = (xhat, rstd, axes, shp)
        return self.gamma.data.reshape(shp) * xhat + self.beta.data.reshape(shp)

    def backward(self, dy):
        xhat, rstd, axes, shp = self.cache
        N, C = dy.shape[:2]
        G = self.num_groups
        rest = dy.shape[2:]
        red = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * xhat).sum(axis=red)  # 累加，不要直接赋值
        self.beta.grad += dy.sum(axis=red)
        dxhat = dy * self.gamma.data.reshape(shp)
        # 同样的分组方式
        def g(a):
            return np.moveaxis(a.reshape(N, C // G, G, *rest), 2, 1)

        dxh, xh = g(dxhat), g(xhat)
        # 标准公式：dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
        dx = rstd * (dxh - dxh.mean(axis=axes, keepdims=True)
                     - xh * (dxh * xh).mean(axis=axes, keepdims=True))
        return np.moveaxis(dx, 1, 2).reshape(dy.shape)
