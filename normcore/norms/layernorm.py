"""LayerNorm, and the standardisation arithmetic every mean-and-variance norm reuses.

``standardize`` / ``standardize_backward`` normalise over any set of axes. LayerNorm uses the
last axes; BatchNorm the batch and spatial axes; GroupNorm and InstanceNorm reshape and use the
last axis. The formulas are written here once.
"""

import math

import numpy as np

from .._array import sum_over
from .base import _TrailingAxesNorm


def standardize(x, axes, eps, out=None):
    """x_hat = (x - mean) * rstd over ``axes``; returns (x_hat, mean, var, rstd), kept dims.

        mean = mean(x)                       over axes
        var  = mean((x - mean)**2)           biased: divide by n, not n - 1
        rstd = 1 / sqrt(var + eps)           eps inside the square root
        x_hat = (x - mean) * rstd

    The variance is taken of the centred values (two passes), which stays accurate when the
    mean is large compared with the spread, where E[x**2] - E[x]**2 cancels catastrophically.
    Four passes over x: the mean, the centring (into ``out`` or a new array, which becomes
    x_hat), the variance (a sum of products, no squared temporary) and the scaling, in place.
    """
    n = _count(x, axes)
    mean = sum_over(x, axes) / n
    x_hat = np.subtract(x, mean, out=out)         # centred for now; scaled in place below
    var = sum_over(x_hat, axes, times=x_hat) / n
    rstd = 1.0 / np.sqrt(var + eps)
    x_hat *= rstd
    return x_hat, mean, var, rstd


def standardize_backward(dx_hat, x_hat, rstd, axes, out=None, means=None):
    """dL/dx from dL/dx_hat when mean and rstd were computed from x over ``axes``:

        dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))

    The three terms are the three paths from x to x_hat: directly, through the mean, and
    through the variance. The result sums to zero over ``axes`` and is orthogonal to x_hat.
    Two reductions and four elementwise passes, all into ``out`` or one new array (dx_hat is
    only read). ``means``: the pair (mean(dx_hat), mean(dx_hat * x_hat)), when the caller has it.
    """
    if means is None:
        n = _count(x_hat, axes)
        means = sum_over(dx_hat, axes) / n, sum_over(dx_hat, axes, times=x_hat) / n
    mean_dx_hat, mean_dx_hat_x_hat = means
    dx = np.multiply(x_hat, mean_dx_hat_x_hat, out=out)
    np.subtract(dx_hat, dx, out=dx)
    dx -= mean_dx_hat
    dx *= rstd
    return dx


def _count(x, axes):
    """n: how many values each statistic is taken over."""
    return math.prod(x.shape[a] for a in ((axes,) if isinstance(axes, (int, np.integer)) else axes))


class LayerNorm(_TrailingAxesNorm):
    r"""Layer normalisation: each sample is standardised over its last ``len(normalized_shape)`` axes.

    Forward, with D = the normalised axes (n = prod(normalized_shape) values per sample)::

        mean  = mean_D(x)                              (*, 1, ..., 1)
        var   = mean_D((x - mean)**2)                  (*, 1, ..., 1)  biased
        rstd  = 1 / sqrt(var + eps)                    (*, 1, ..., 1)
        x_hat = (x - mean) * rstd                      (*, normalized_shape)
        y     = x_hat * gamma + beta                   gamma, beta: normalized_shape

    Backward, with dx_hat = dy * gamma::

        dgamma = sum over the leading axes of dy * x_hat
        dbeta  = sum over the leading axes of dy
        dx     = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat))

    Training and evaluation behave the same. ``bias=False`` drops beta,
    ``elementwise_affine=False`` drops both. Cache: x_hat and rstd.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        self._set_normalized_shape(normalized_shape)
        self.eps = float(eps)
        self.elementwise_affine = elementwise_affine
        self._make_affine(self.normalized_shape, elementwise_affine, elementwise_affine and bias, dtype)

    def _normalize(self, x, out):
        _, _, _, rstd = standardize(x, self._axes, self.eps, out=out)
        return rstd

    def _normalize_backward(self, dx_hat, x_hat, rstd, out):
        standardize_backward(dx_hat, x_hat, rstd, self._axes, out=out)
