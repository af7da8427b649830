"""LogSoftmax as the log of a (stable) softmax, computed on the axis moved to the end."""

import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        last = np.moveaxis(x, self.axis, -1)
        e = np.exp(last - last.max(axis=-1, keepdims=True))
        probs = e / e.sum(axis=-1, keepdims=True)
        self.probs = np.moveaxis(probs, -1, self.axis)
        return np.log(self.probs)

    def backward(self, dy):
        total = np.sum(dy, axis=self.axis, keepdims=True)
        return dy - self.probs * total
