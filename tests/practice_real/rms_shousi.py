import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    # 手撕 RMSNorm：y = x / sqrt(mean(x^2) + eps) * gamma，没有减均值，也没有 beta
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # eps 为 None 时用输入 dtype 的机器精度（和 PyTorch 一致）
        eps = self.eps if self.eps is not None else np.finfo(x.dtype).eps
        D = int(np.prod(self.normalized_shape))
        x2 = x.reshape(-1, D)
        ms = (x2 ** 2).sum(axis=1, keepdims=True) / D      # 均方
        r = 1.0 / np.sqrt(ms + eps)                       # 1 / RMS
        self.cache = (x2, r, D, x.shape)
        return (x2 * r * self.gamma.data.reshape(1, D)).reshape(x.shape)

    def backward(self, dy):
        x2, r, D, shape = self.cache
        dy2 = dy.reshape(-1, D)
        # gamma 的梯度：对所有样本求和
        self.gamma.grad += (dy2 * x2 * r).sum(axis=0).reshape(self.normalized_shape)
        g = dy2 * self.gamma.data.reshape(1, D)
        # dx = r * g - x * r^3 * sum(g * x) / D
        dx = r * g - x2 * r ** 3 * (g * x2).sum(axis=1, keepdims=True) / D
        return dx.reshape(shape)
