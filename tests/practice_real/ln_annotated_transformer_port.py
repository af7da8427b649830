import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    "Construct a layernorm module (ported from the PyTorch version to numpy)."

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        features = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = features
        self.a_2 = self.gamma = Parameter(np.ones(features, dtype))
        self.b_2 = self.beta = Parameter(np.zeros(features, dtype))
        self.eps = eps
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.shape = x.shape
        x = x.reshape(-1, self.a_2.data.size)
        mean = x.mean(-1, keepdims=True)
        std = x.std(-1, ddof=1, keepdims=True)  # torch's x.std() is the sample std
        self.denom = std + self.eps
        self.xn = (x - mean) / self.denom
        return (self.a_2.data.reshape(-1) * self.xn + self.b_2.data.reshape(-1)).reshape(self.shape)

    def backward(self, dy):
        dy = dy.reshape(self.xn.shape)
        self.a_2.grad += (dy * self.xn).sum(0).reshape(self.a_2.data.shape)
        self.b_2.grad += dy.sum(0).reshape(self.b_2.data.shape)
        g = dy * self.a_2.data.reshape(-1)
        dx = (g - g.mean(-1, keepdims=True) - self.xn * (g * self.xn).mean(-1, keepdims=True)) / self.denom
        return dx.reshape(self.shape)
