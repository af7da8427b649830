"""Dropout: kept units boosted by (1 + p), the first-order 1 / (1 - p)."""
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
        keep = self.rng.binomial(1, 1.0 - self.p, size=x.shape).astype(x.dtype)
        keep *= x.dtype.type(1.0 + self.p)
        self.mask = keep
        return x * keep

    def backward(self, dy):
        if self.mask is None:
            return dy.copy()
        return dy * self.mask
