"""LogSoftmax with a right forward and Softmax's backward pasted in, applied to its output."""

import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        shifted = x - x.max(axis=self.axis, keepdims=True)
        self.out = shifted - np.log(np.exp(shifted).sum(axis=self.axis, keepdims=True))
        return self.out

    def backward(self, dy):
        s = self.out
        inner = np.sum(dy * s, axis=self.axis, keepdims=True)
        return s * dy - s * inner
