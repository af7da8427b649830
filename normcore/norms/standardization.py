"""The standardisation arithmetic of LayerNorm, BatchNorm, GroupNorm and InstanceNorm, written once.

These four norms compute the same thing over different axes A of their input::

    LayerNorm       A = the last len(normalized_shape) axes      (each sample on its own)
    BatchNorm       A = every axis but the channel axis 1        (each channel over the batch)
    GroupNorm       A = the last axis of x.reshape(N, G, -1)     (each group of channels)
    InstanceNorm    A = the spatial axes 2, 3, ...               (each sample and channel)

so the forward and the backward are plain functions of ``axes``, used by every layer::

    mean, var   = moments(x, A)                          mean_A(x), mean_A((x - mean)**2)
    x_hat, rstd = standardize(x, mean, var, eps)         (x - mean) / sqrt(var + eps)
    dx          = standardize_backward(dx_hat, x_hat, rstd, A)

Shapes in the comments: X is x's shape, S the statistics' shape, X with every axis of A set
to 1 (``keepdims``), so that S broadcasts against X. Every mean is accumulated in float64,
whatever x's dtype: a float32 input gets statistics as accurate as a float64 one, at the
price of float64 temporaries (the fast tier, ``normcore.fast``, avoids them).
"""

import math

import numpy as np


def mean_over(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The mean of ``a`` over ``axes``, kept as size-1 axes (shape S), accumulated in float64.

    Over zero values (an empty input) the mean is 0, not 0/0: there is nothing to normalise.
    """
    n = math.prod(a.shape[ax] for ax in axes)                   # values per statistic
    return a.sum(axis=axes, keepdims=True, dtype=np.float64) / max(n, 1)  # S


def moments(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """mean = mean_A(x) and the *biased* variance var = mean_A((x - mean)**2), both of shape S.

    The variance is the mean square of the centred values (two passes over x), not
    E[x**2] - E[x]**2: that one-pass form cancels catastrophically when the mean is large
    compared with the spread (x = 1e4 + noise in float32 gives a variance of 0 or below).
    """
    mean = mean_over(x, axes)                  # S
    var = mean_over((x - mean) ** 2, axes)     # S    divided by n, not n - 1
    return mean, var


def standardize(x: np.ndarray, mean: np.ndarray, var: np.ndarray,
                eps: float) -> tuple[np.ndarray, np.ndarray]:
    """x_hat = (x - mean) * rstd with rstd = 1 / sqrt(var + eps); returns (x_hat, rstd).

    ``mean`` and ``var`` broadcast against x: a batch's own statistics from ``moments``, or
    BatchNorm's running statistics in evaluation. eps sits inside the square root. x_hat has
    x's dtype; rstd stays in float64.
    """
    rstd = 1.0 / np.sqrt(var + eps)                             # S
    x_hat = ((x - mean) * rstd).astype(x.dtype, copy=False)    # X
    return x_hat, rstd


def standardize_backward(dx_hat: np.ndarray, x_hat: np.ndarray, rstd: np.ndarray,
                         axes: tuple[int, ...]) -> np.ndarray:
    """dL/dx from dL/dx_hat, when mean and var were computed from x over ``axes`` (n values)::

        dx = rstd * (dx_hat - mean_A(dx_hat) - x_hat * mean_A(dx_hat * x_hat))

    The three terms are the three paths from x to x_hat: directly, through the mean, and
    through the variance. So dx sums to zero over A and is orthogonal to x_hat (up to eps).
    The result is float64 when rstd is (the caller casts it back).
    """
    mean_dx_hat = mean_over(dx_hat, axes)                      # S
    mean_dx_hat_x_hat = mean_over(dx_hat * x_hat, axes)        # S
    return rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)   # X
