"""The standardisation arithmetic of LayerNorm, BatchNorm, GroupNorm and InstanceNorm, written once.

These four norms compute the same thing over different axes A of their input::

    LayerNorm       A = the last len(normalized_shape) axes      (each sample on its own)
    BatchNorm       A = every axis but the channel axis 1        (each channel over the batch)
    GroupNorm       A = the last axis of x.reshape(N, G, -1)     (each group of channels)
    InstanceNorm    A = the spatial axes 2, 3, ...               (each sample and channel)

so the forward and the backward are plain functions of ``axes``, used by every layer (and by
Batch Renorm and Ghost BatchNorm, over BatchNorm's axes, and ``nn.WSLinear``, over each row of
its weight)::

    mean, var, scale = moments(x, A)                     mean_A(x), mean_A((x - mean)**2) / scale**2
    x_hat, rstd = standardize(x, mean, var, eps, scale)  (x - mean) / sqrt(var * scale**2 + eps)
    dx          = standardize_backward(dx_hat, x_hat, rstd, A)

``scale`` is 1, and the formulas are computed exactly as written, unless the variance
overflows float64 (|x - mean| beyond ~1e154: values near 1e200 have a variance near 1e400).
Only then is the variance carried in units of scale**2, scale a power of two at least as
large as every |x - mean| (``scaled_mean_square``), so that x_hat, which does not depend on
the size of x, still comes out right. (At |x| ~ 1e-200 the squares underflow and eps decides,
as the formula says it should.)
PyTorch 2.13 differs here: on float64 inputs near 1e200 its LayerNorm and GroupNorm return
NaN or beta, its BatchNorm beta and its RMSNorm 0 (x_hat = 0), with gradients to match.

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


def size_scale(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The smallest power of two >= max_A |a| and >= 1, kept as size-1 axes (shape S), in float64.

    Dividing by a power of two is exact, and a / scale is at most 1 in size: its square
    cannot overflow. Where a holds inf or NaN, scale is 1: those are computed as written.
    """
    largest = np.max(np.abs(a), axis=axes, keepdims=True, initial=1.0).astype(np.float64)  # S  at least 1
    largest[~np.isfinite(largest)] = 1.0                                                   # S
    return np.exp2(np.ceil(np.log2(largest)))                                             # S


def scaled_mean_square(a: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """mean_A(a**2) of shape S, as (ms, scale): the mean square is ms * scale**2.

    scale is 1 (and ms the mean square itself) unless a**2 overflows float64, i.e. some
    |a| > ~1e154. Then the mean square is taken of a / scale, with scale = ``size_scale(a)``,
    a power of two >= max_A |a|: dividing by it is exact, and the squares stay at most 1.
    """
    with np.errstate(over="ignore"):
        ms = mean_over(np.square(a, dtype=np.float64), axes)   # S    inf where a**2 overflowed
    if not np.isinf(ms).any():
        return ms, np.ones_like(ms)                            # S, S the common case: scale 1
    scale = size_scale(a, axes)                                # S    a power of two, >= 1
    ms = mean_over(np.square(a / scale, dtype=np.float64), axes)  # S    in units of scale**2
    return ms, scale


def moments(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """mean = mean_A(x) and the *biased* variance mean_A((x - mean)**2), of shape S, the
    variance as ``var`` in units of ``scale**2``: returns (mean, var, scale), the variance
    being var * scale**2 (scale is 1 unless the variance overflows float64: ``scaled_mean_square``).

    The variance is the mean square of the centred values (two passes over x), not
    E[x**2] - E[x]**2: that one-pass form cancels catastrophically when the mean is large
    compared with the spread (x = 1e4 + noise in float32 gives a variance of 0 or below).
    """
    mean = mean_over(x, axes)                                   # S
    var, scale = scaled_mean_square(x - mean, axes)             # S    divided by n, not n - 1
    return mean, var, scale


def standardize(x: np.ndarray, mean: np.ndarray, var: np.ndarray, eps: float,
                scale: np.ndarray | float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """x_hat = (x - mean) * rstd with rstd = 1 / sqrt(var * scale**2 + eps); returns (x_hat, rstd).

    ``mean`` and ``var`` broadcast against x: a batch's own statistics from ``moments`` (var
    in units of scale**2), or BatchNorm's running statistics in evaluation (scale 1). eps
    sits inside the square root. rstd is computed as 1 / (scale * sqrt(var + eps / scale**2)),
    the same number, which does not overflow when var * scale**2 would. x_hat has x's dtype;
    rstd stays in float64.
    """
    rstd = 1.0 / (scale * np.sqrt(var + eps / scale ** 2))     # S
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
    return standardize_backward_from_means(dx_hat, x_hat, rstd, mean_dx_hat, mean_dx_hat_x_hat)  # X


def standardize_backward_from_means(dx_hat: np.ndarray, x_hat: np.ndarray, rstd: np.ndarray,
                                    mean_dx_hat: np.ndarray, mean_dx_hat_x_hat: np.ndarray) -> np.ndarray:
    """``standardize_backward`` with its two means given (shape S), for when they are taken over
    more values than this x holds: SyncBatchNorm's, over every worker's shard of the batch::

        dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)
    """
    return rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)   # X
