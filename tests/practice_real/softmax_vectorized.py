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
        # dx = y * (dy - <dy, y>)
        y = self.y
        return (y * (dy - (dy * y).sum(axis=self.axis, keepdims=True))).astype(dy.dtype)
