"""Soft-capping, y = c * tanh(x / c), forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Gemma 2 caps its attention scores and its final logits so: a logit
can approach the cap c but never pass it, and logits far below c pass almost unchanged.

A name in brackets at the end of a line, such as ``[slope]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class SoftCap:
    """y = cap * tanh(x / cap), element by element, any shape; no parameters.

    Forward, with u = x / c::

        u = x / c                          (*)
        t = tanh(u)                        (*)    in (-1, 1)
        y = c * t                          (*)    in (-c, c); y ~ x where |x| << c

    Backward, one node at a time from dy::

        dt = c * dy                        y = c * t
        du = dt * (1 - t**2)               tanh'(u) = 1 - tanh(u)**2, from the output t
        dx = du / c                        u = x / c

    The outer c and the inner 1 / c cancel: dx = dy * (1 - t**2) = dy * (1 - (y / c)**2).
    Written with the capped output itself, 1 - y**2 is a plain tanh's slope, wrong for any
    c other than 1 (negative wherever |y| > 1); written as 1 - tanh(x)**2 it forgets the cap
    inside the tanh.

    Cache: the slope 1 - t**2. ``backward(dy)`` returns dL/dx in dy's dtype.
    """

    def __init__(self, cap):
        self.cap = cap

    def forward(self, x):
        t = np.tanh(x / self.cap)                                       # (*)
        self.slope = 1.0 - t ** 2                                       # (*) tanh'(x / c) [slope]
        y = self.cap * t                                                # (*) [y]
        return y.astype(x.dtype)

    def backward(self, dy):
        dx = dy * self.slope                                            # (*) c and 1 / c cancel [dx]
        return dx.astype(dy.dtype)
