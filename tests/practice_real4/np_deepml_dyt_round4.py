# exercise: dyt
# Source: a published solution to Deep-ML problem 128 "Dynamic Tanh: Normalization-Free
# Transformer Activation" (deep-ml.com/problems/128), a GitHub file found in the code index
# without its repository name (index id 8176175301): tanh written with np.exp, then
#     return (x * gamma + beta).round(4).tolist()
# (the problem's expected output is printed to 4 decimals).
# Ported: dynamic_tanh kept as written and wrapped by the DyT class (its list converted back
# to an array); the problem has no backward: the one added differentiates the formula (the
# rounding has no derivative), as its author would write it. Kept: the rounding to 4 decimals
# and the exp-based tanh.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def dynamic_tanh(x: np.ndarray, alpha: float, gamma: float, beta: float) -> list[float]:
    def tanh(x: np.ndarray) -> np.ndarray:
        return (np.exp(x) - np.exp(-x)) / (np.exp(x) + np.exp(-x))

    x = tanh(alpha * x)
    return (x * gamma + beta).round(4).tolist()


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.x = x
        return np.asarray(dynamic_tanh(x, self.alpha.data, self.gamma.data, self.beta.data), dtype=x.dtype)

    def backward(self, dy):
        x = self.x
        lead = tuple(range(x.ndim - len(self.normalized_shape)))
        u = self.alpha.data * x
        t = (np.exp(u) - np.exp(-u)) / (np.exp(u) + np.exp(-u))
        self.gamma.grad += (dy * t).sum(axis=lead)
        self.beta.grad += dy.sum(axis=lead)
        du = dy * self.gamma.data * (1 - t ** 2)
        self.alpha.grad += np.sum(du * x)
        return du * self.alpha.data
