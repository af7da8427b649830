"""Dropout, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.Dropout: *inverted* dropout, so the scaling
happens in training and evaluation is the identity.

A name in brackets at the end of a line, such as ``[eval]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
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
        self.mask = None                                                # no forward yet

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        if not self.training or self.p == 0.0:  # [eval]
            self.mask = None  # [eval-mask]
            return x  # [eval-return]
        scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)  # [scale]
        keep = self.rng.random(x.shape) >= self.p                       # True with probability 1 - p [keep]
        self.mask = keep * scale                                        # the kept units' factor
        return (x * self.mask).astype(x.dtype)

    def backward(self, dy):
        if self.mask is None:
            return dy
        return (dy * self.mask).astype(dy.dtype)  # [dx]
