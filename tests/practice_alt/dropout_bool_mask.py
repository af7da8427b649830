"""Test fixture: a correct Dropout that keeps a boolean mask and applies the scale apart.

The grader must pass it.
"""

import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        self.p = p
        self.rng = np.random.default_rng(rng)
        self.training = True

    def forward(self, x):
        if not self.training or self.p == 0:
            self.keep = None
            return x
        self.keep = self.rng.uniform(size=x.shape) >= self.p
        if self.p == 1:
            return np.zeros_like(x)
        return np.where(self.keep, x / (1 - self.p), 0).astype(x.dtype)

    def backward(self, dy):
        if self.keep is None:
            return dy
        if self.p == 1:
            return np.zeros_like(dy)
        return np.where(self.keep, dy / (1 - self.p), 0).astype(dy.dtype)
