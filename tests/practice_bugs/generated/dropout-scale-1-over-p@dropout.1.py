"""Dropout kept units scaled by 1 / p.

Generated, do not edit: regenerate with `python tests/practice_bugs/generate.py`.
Mistake dropout-scale-1-over-p, variant 1: normcore/practice/solutions/dropout.py with
exactly that variant of normcore/practice/catalog.py applied. The grader must name the
mistake on every failing check.
"""

import numpy as np


class Dropout:
    """Zero each unit with probability p in training, and scale the kept ones by 1 / (1 - p).

    Training::

        mask ~ Bernoulli(1 - p), one draw per element per forward
        y  = x * mask / (1 - p)         so E[y] = x
        dx = dy * mask / (1 - p)        the same mask as the forward

    Evaluation (and p = 0): y = x, dx = dy. p = 1: y = 0, dx = 0.
    ``rng`` is None, an int seed or a numpy Generator.
    """

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
        if not self.training or self.p == 0.0:  # [eval]
            self.mask = None
            return x  # [eval-return]
        scale = 1.0 / self.p  # [scale]
        keep = self.rng.random(x.shape) >= self.p                       # True with probability 1 - p [keep]
        self.mask = keep * scale                                        # the kept units' factor
        return (x * self.mask).astype(x.dtype)

    def backward(self, dy):
        if self.mask is None:
            return dy
        return (dy * self.mask).astype(dy.dtype)  # [dx]
