"""LogSoftmax: log-sum-exp shifted by the slice's mean (any constant works in exact arithmetic)."""
import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        c = x.mean(axis=self.axis, keepdims=True)
        lse = c + np.log(np.exp(x - c).sum(axis=self.axis, keepdims=True))
        self.logp = x - lse
        return self.logp

    def backward(self, dy):
        p = np.exp(self.logp)
        return dy - p * dy.sum(axis=self.axis, keepdims=True)
