"""Test fixture: a correct soft-cap that keeps its output y and writes the slope from it,
1 - (y / c)**2, with np.divide and np.multiply. The grader must pass it.
"""

import numpy as np


class SoftCap:
    def __init__(self, cap):
        self.cap = cap

    def forward(self, x):
        self.y = np.multiply(self.cap, np.tanh(np.divide(x, self.cap)))
        return self.y.astype(x.dtype)

    def backward(self, dy):
        ratio = np.divide(self.y, self.cap)
        return (dy * (1.0 - ratio ** 2)).astype(dy.dtype)
