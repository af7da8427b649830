"""DyT (Dynamic Tanh), forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as the DyT layer of "Transformers without Normalization"
(Zhu, Chen, He, LeCun and Liu, 2025): y = gamma * tanh(alpha * x) + beta over the last
len(normalized_shape) axes, alpha ONE learned scalar (shape (1,)) shared by every element,
gamma and beta one value per element of normalized_shape. No mean, no variance, no eps.

A name in brackets at the end of a line, such as ``[dalpha]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    """Dynamic Tanh over the last axes D (the normalized_shape); input (*, D).

    Forward::

        u = alpha * x                         (*, D)   alpha: (1,), one scalar for every element
        t = tanh(u)                           (*, D)
        y = gamma * t + beta                  gamma, beta: D

    Backward, dt = dy * gamma (the chain rule, one node at a time)::

        dgamma = sum over the leading axes of dy * t,  dbeta = sum of dy      D
        du     = dt * (1 - t**2)              (*, D)   tanh'(u) = 1 - tanh(u)**2: the OUTPUT t
        dx     = alpha * du                   (*, D)   u = alpha * x
        dalpha = sum over EVERY element of du * x       one number, like alpha itself

    Each output depends on its own input only, so dx has no cross-element terms (unlike
    LayerNorm's). alpha multiplied every element, so its gradient collects from all of them:
    the batch, the positions and the channels. gamma and beta are shared by the leading axes
    only, so theirs are sums over those.
    """

    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))           # (1,) one scalar [alpha]
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype)) if elementwise_affine and bias else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        u = self.alpha.data * x                                         # (*, D) [u]
        t = np.tanh(u)                                                  # (*, D)
        self.cache = (x, t)
        y = t
        if self.gamma is not None:
            y = y * self.gamma.data                                     # (*, D) [scale]
        if self.beta is not None:
            y = y + self.beta.data                                      # (*, D)
        return y.astype(x.dtype)

    def backward(self, dy):
        x, t = self.cache
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))      # the axes gamma and beta are shared over
        dt = dy                                                         # (*, D)
        if self.beta is not None:
            self.beta.grad += dy.sum(axis=lead)                         # D [dbeta]
        if self.gamma is not None:
            self.gamma.grad += (dy * t).sum(axis=lead)                  # D [dgamma]
            dt = dy * self.gamma.data                                   # (*, D) [dt]
        du = dt * (1.0 - t ** 2)                                        # (*, D) tanh' from the output t [du]
        self.alpha.grad += (du * x).sum()                               # (1,) over every element [dalpha]
        dx = self.alpha.data * du                                       # (*, D) [dx]
        return dx.astype(dy.dtype)
