"""Dropout as in CS231n's notes: p = 0.5 is "the probability of keeping a unit active", a
number in the code, whatever p the layer was built with."""

import numpy as np

p = 0.5  # probability of keeping a unit active. higher = less dropout


class Dropout:
    def __init__(self, p=0.5, rng=None):
        self.rng = np.random.default_rng(rng)
        self.training = True

    def forward(self, x):
        if not self.training:
            self.mask = None
            return x
        self.mask = (self.rng.random(x.shape) < p) / p
        return x * self.mask

    def backward(self, dy):
        return dy if self.mask is None else dy * self.mask
