# 手撕 DyT：y = gamma * tanh(alpha * x) + beta
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))   # 标量 alpha
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.x = x
        self.t = np.tanh(self.alpha.data * x)
        return self.gamma.data * self.t + self.beta.data

    def backward(self, dy):
        k = dy.ndim - len(self.normalized_shape)
        ax = tuple(range(k))                        # 前面的 batch 维度
        self.gamma.grad += (dy * self.t).sum(axis=ax)
        self.beta.grad += dy.sum(axis=ax)
        du = dy * self.gamma.data * (1 - self.t ** 2)   # tanh 的导数用输出 t
        # alpha 是标量，梯度取平均
        self.alpha.grad += np.mean(du * self.x).reshape(1)
        return du * self.alpha.data
