"""LogSoftmax with the max shift; backward d logp_i / d x_i = 1 - p_i."""
import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        z = x - x.max(axis=self.axis, keepdims=True)
        self.logp = z - np.log(np.exp(z).sum(axis=self.axis, keepdims=True))
        return self.logp

    def backward(self, dy):
        return dy * (1.0 - np.exp(self.logp))
