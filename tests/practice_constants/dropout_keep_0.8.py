"""Dropout that keeps each unit with probability 0.8, written as a number, and scales the kept
ones by 1 / 0.8."""

import numpy as np


class Dropout:
    keep_prob = 0.8

    def __init__(self, p=0.5, rng=None):
        self.p = p
        self.rng = np.random.default_rng(rng)
        self.training = True
        self.mask = None

    def forward(self, x):
        if not self.training or self.p == 0.0:
            self.mask = None
            return x
        keep = self.rng.random(x.shape) < self.keep_prob
        self.mask = keep / self.keep_prob
        return (x * self.mask).astype(x.dtype)

    def backward(self, dy):
        if self.mask is None:
            return dy
        return (dy * self.mask).astype(dy.dtype)
