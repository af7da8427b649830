"""Dropout: the backward draws its mask again from the layer's generator."""
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
        self.mask = True
        return x * self._keep(x)

    def backward(self, dy):
        if self.mask is None:
            return dy.copy()
        return dy * self._keep(dy)

    def _keep(self, a):
        keep = self.rng.binomial(1, 1.0 - self.p, size=a.shape).astype(a.dtype)
        if self.p < 1.0:
            keep /= a.dtype.type(1.0 - self.p)
        return keep
