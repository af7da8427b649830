"""Test fixture: a correct LogSoftmax written on the axis moved to the end, as x - logsumexp(x),
caching the softmax itself, with the backward as dy minus its projection. The grader must pass it.
"""

import numpy as np


class LogSoftmax:
    def __init__(self, axis=-1):
        self.axis = axis

    def forward(self, x):
        last = np.moveaxis(x, self.axis, -1)
        top = last.max(axis=-1, keepdims=True)
        logsumexp = top + np.log(np.exp(last - top).sum(axis=-1, keepdims=True))
        out = last - logsumexp
        self.softmax = np.exp(out)                      # kept on the last axis
        return np.moveaxis(out, -1, self.axis)

    def backward(self, dy):
        g = np.moveaxis(dy, self.axis, -1)
        dx = g - self.softmax * g.sum(axis=-1, keepdims=True)
        return np.moveaxis(dx, -1, self.axis)
