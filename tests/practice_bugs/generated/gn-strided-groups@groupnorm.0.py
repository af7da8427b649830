"""GroupNorm groups made of strided channels.

Generated, do not edit: regenerate with `python tests/practice_bugs/generate.py`.
Mistake gn-strided-groups, variant 0: normcore/practice/solutions/groupnorm.py with exactly
that variant of normcore/practice/catalog.py applied. The grader must name the mistake on
every failing check.
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    """Group normalisation of input (N, C, *spatial).

    Forward, with xg = x.reshape(N, G, C/G * spatial) and its last axis as the group axis g::

        mean  = mean_g(xg),  var = mean_g((xg - mean)**2)     (N, G, 1)   biased
        rstd  = 1 / sqrt(var + eps)                           (N, G, 1)
        x_hat = ((xg - mean) * rstd).reshape(x.shape)         (N, C, *)
        y     = gamma * x_hat + beta                          gamma, beta: (C,) per channel

    Backward, dx_hat = dy * gamma, LayerNorm's backward on each group::

        dgamma = sum over N and spatial of dy * x_hat,  dbeta = sum of dy
        dx = rstd * (dx_hat - mean_g(dx_hat) - x_hat * mean_g(dx_hat * x_hat))
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype)) if affine else None
        self.beta = Parameter(np.zeros(num_channels, dtype)) if affine else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def group(self, a):
        """(N, C, *spatial) -> (N, G, C/G * spatial): group g holds channels g*C/G .. (g+1)*C/G - 1."""
        return a.reshape(a.shape[0], -1, self.num_groups, *a.shape[2:]).swapaxes(1, 2).reshape(a.shape[0], self.num_groups, -1)  # [group]

    def ungroup(self, ag, shape):
        """The inverse of ``group``."""
        return ag.reshape(shape[0], self.num_groups, -1, *shape[2:]).swapaxes(1, 2).reshape(shape)  # [ungroup]

    def forward(self, x):
        view = (1, -1) + (1,) * (x.ndim - 2)                            # (1, C, 1, 1)
        xg = self.group(x)                                              # (N, G, M)
        mean = xg.mean(axis=-1, keepdims=True)                          # (N, G, 1)
        var = ((xg - mean) ** 2).mean(axis=-1, keepdims=True)           # (N, G, 1) biased [var]
        rstd = 1.0 / np.sqrt(var + self.eps)                            # (N, G, 1) [rstd]
        x_hat = self.ungroup((xg - mean) * rstd, x.shape)               # (N, C, H, W)
        self.cache = (x_hat, rstd, view)
        y = x_hat
        if self.gamma is not None:
            y = x_hat * self.gamma.data.reshape(view) + self.beta.data.reshape(view)
        return y.astype(x.dtype)

    def backward(self, dy):
        x_hat, rstd, view = self.cache
        axes = (0,) + tuple(range(2, dy.ndim))                          # every axis but the channels
        dx_hat = dy                                                     # (N, C, H, W)
        if self.gamma is not None:
            self.gamma.grad += (dy * x_hat).sum(axis=axes)              # (C,) [dgamma]
            self.beta.grad += dy.sum(axis=axes)                         # (C,) [dbeta]
            dx_hat = dy * self.gamma.data.reshape(view)                 # (N, C, H, W)
        dx_hat_g, x_hat_g = self.group(dx_hat), self.group(x_hat)      # (N, G, M)
        mean_dx_hat = dx_hat_g.mean(axis=-1, keepdims=True)                      # (N, G, 1)
        mean_dx_hat_x_hat = (dx_hat_g * x_hat_g).mean(axis=-1, keepdims=True)   # (N, G, 1)
        dx = rstd * (dx_hat_g - mean_dx_hat - x_hat_g * mean_dx_hat_x_hat)       # (N, G, M) [dx]
        return self.ungroup(dx, dy.shape).astype(dy.dtype)
