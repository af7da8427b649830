"""A softmax computed in float16 inside (a half-precision kernel's habit): about 1e-3 off,
far more than float32's rounding. Must fail, with no mistake named."""

import numpy as np


class Softmax:
    def __init__(self, axis=-1):
        self.axis = axis
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        z = (x - x.max(axis=self.axis, keepdims=True)).astype(np.float16)
        e = np.exp(z)
        y = e / e.sum(axis=self.axis, keepdims=True)
        self.y = y.astype(x.dtype)
        return self.y

    def backward(self, dy):
        y = self.y
        return y * (dy - (dy * y).sum(axis=self.axis, keepdims=True))
