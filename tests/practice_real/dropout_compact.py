import numpy as np


class Dropout:
    def __init__(self, p=0.5, rng=None):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        q = 1 - self.p
        self.m = (self.rng.binomial(1, q, x.shape) / q if q > 0 else np.zeros(x.shape)) if self.training else None
        return x if self.m is None else (x * self.m).astype(x.dtype)

    def backward(self, dy):
        return dy if self.m is None else (dy * self.m).astype(dy.dtype)
