# DyT misremembered: alpha scales the tanh's output instead of its input,
# y = gamma * alpha * tanh(x) + beta (gradients consistent with that formula).
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
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.t = np.tanh(x)
        return self.gamma.data * self.alpha.data * self.t + self.beta.data

    def backward(self, dy):
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        a = self.alpha.data
        self.gamma.grad += (dy * a * self.t).sum(lead)
        self.beta.grad += dy.sum(lead)
        self.alpha.grad += np.sum(dy * self.gamma.data * self.t).reshape(1)
        return dy * self.gamma.data * a * (1 - self.t ** 2)
