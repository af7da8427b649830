import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    """手撕 LayerNorm：对每个样本最后几维做归一化。"""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))   # 缩放
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))   # 平移

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        k = len(self.normalized_shape)
        lead = x.shape[:-k]
        # 把要归一化的维度拍平成一维：(B, D)
        x2 = x.reshape(-1, int(np.prod(self.normalized_shape)))
        mu = np.mean(x2, axis=1, keepdims=True)           # 均值
        var = np.mean((x2 - mu) ** 2, axis=1, keepdims=True)  # 有偏方差（除以 D）
        rstd = 1.0 / np.sqrt(var + self.eps)              # eps 在根号里面
        xhat = (x2 - mu) * rstd
        self.cache = (xhat, rstd, lead)
        y = xhat * self.gamma.data.reshape(1, -1) + self.beta.data.reshape(1, -1)
        return y.reshape(x.shape)

    def backward(self, dy):
        xhat, rstd, lead = self.cache
        D = xhat.shape[1]
        dy2 = dy.reshape(-1, D)
        # 参数梯度：对 batch 维求和
        self.gamma.grad = np.sum(dy2 * xhat, axis=0).reshape(self.normalized_shape)
        self.beta.grad = np.sum(dy2, axis=0).reshape(self.normalized_shape)
        dxhat = dy2 * self.gamma.data.reshape(1, -1)
        # 输入梯度：dx = rstd / D * (D*dxhat - sum(dxhat) - xhat * sum(dxhat*xhat))
        dx = rstd / D * (D * dxhat - np.sum(dxhat, axis=1, keepdims=True)
                         - xhat * np.sum(dxhat * xhat, axis=1, keepdims=True))
        return dx.reshape(dy.shape)
