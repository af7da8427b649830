import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        z = x - x.max(axis=self.axis, keepdims=True)
        e = np.exp(z)
        self.y = e / e.sum(axis=self.axis, keepdims=True)
        return self.y

    def backward(self, dy):
        # d softmax / dx = softmax * (1 - softmax)
        return (dy * self.y * (1 - self.y)).astype(dy.dtype)
