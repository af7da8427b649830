"""Test fixture: a correct SoftCap whose backward goes node by node (dt = c * dy, du through
tanh, dx = du / c) from the cached tanh. The grader must pass it.
"""

import numpy as np


class SoftCap:
    def __init__(self, cap):
        self.c = float(cap)

    def forward(self, x):
        self.t = np.tanh(x / self.c)
        return (self.c * self.t).astype(x.dtype)

    def backward(self, dy):
        dt = self.c * dy
        du = dt * (1.0 - self.t * self.t)
        dx = du / self.c
        return dx.astype(dy.dtype)
