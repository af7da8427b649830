"""Dropout: the forward only zeroes; the 1 / (1 - p) goes into the backward."""
import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True
        self.mask = None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        if not self.training or self.p == 0.0:
            self.mask = None
            return x.copy()
        self.mask = self.rng.random(x.shape) >= self.p
        return x * self.mask

    def backward(self, dy):
        if self.mask is None:
            return dy.copy()
        if self.p == 1.0:
            return np.zeros_like(dy)
        return dy * self.mask / (1.0 - self.p)
