"""RMSNorm: LayerNorm without the mean (no re-centring, no beta)."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import ShapeLike
from .base import _TrailingAxesNorm, eps_arg, flag
from .standardization import mean_over, scaled_mean_square


class RMSNorm(_TrailingAxesNorm):
    r"""Root-mean-square normalisation over the last ``len(normalized_shape)`` axes D.

    Forward (``*`` the leading axes)::

        ms    = mean_D(x**2)                      (*, 1, ..., 1)   the mean square, not a variance
        rrms  = 1 / sqrt(ms + eps)                (*, 1, ..., 1)   eps inside the square root
        x_hat = x * rrms                          (*, normalized_shape)
        y     = x_hat * gamma                     gamma: normalized_shape

    Backward::

        dgamma = sum_*(dy * x_hat)                normalized_shape
        dx_hat = dy * gamma                       (*, normalized_shape)
        dx     = rrms * (dx_hat - x_hat * mean_D(dx_hat * x_hat))

    It is LayerNorm's backward without the ``- mean_D(dx_hat)`` term, because no mean was
    subtracted. ``eps=None`` uses the machine epsilon of the compute dtype (float32's for
    float16 inputs), as PyTorch does. The mean square divides by n, not by n - 1, and eps is
    added before the square root, not to the RMS. Cache: x_hat and rrms.

    Where x**2 overflows float64 (inputs near 1e200), the mean square is taken of x / scale
    (``scaled_mean_square``; scale is 1 otherwise) and rrms = 1 / (scale * sqrt(ms + eps /
    scale**2)), the same number, so such rows are normalised correctly; PyTorch 2.13 returns 0
    (and a zero gradient) there.
    """

    eps: float | None

    def __init__(self, normalized_shape: ShapeLike, eps: float | None = None,
                 elementwise_affine: bool = True, dtype: DTypeLike = np.float64) -> None:
        self._set_normalized_shape(normalized_shape)
        self.eps = None if eps is None else eps_arg(eps, "RMSNorm")
        self.elementwise_affine = flag(elementwise_affine, "elementwise_affine", "RMSNorm")
        self._make_affine(self.normalized_shape, self.elementwise_affine, False, dtype)

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (*, ns)  float16 -> float32
        D = self._axes                                             # the last len(ns) axes
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        ms, scale = scaled_mean_square(x, D)                       # (*, 1)  mean_D(x**2) = ms * scale**2
        rrms = 1.0 / (scale * np.sqrt(ms + eps / scale ** 2))      # (*, 1)  = 1 / sqrt(ms * scale**2 + eps)
        x_hat = (x * rrms).astype(x.dtype, copy=False)             # (*, ns)
        gamma, _ = self._gamma_beta(x.dtype, self.normalized_shape)  # (ns)
        y = x_hat * gamma                                          # (*, ns)
        self._cache = (x_hat, rrms, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rrms, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (*, ns)
        D = self._axes
        lead = tuple(range(x_hat.ndim - len(D)))                   # the axes * gamma is shared over
        dgamma = (dy * x_hat).sum(axis=lead, dtype=np.float64)     # (ns)
        self._add_grads(dgamma, None)
        gamma, _ = self._gamma_beta(x_hat.dtype, self.normalized_shape)  # (ns)
        dx_hat = dy * gamma                                        # (*, ns)
        dx = rrms * (dx_hat - x_hat * mean_over(dx_hat * x_hat, D))  # (*, ns)
        return dx.astype(in_dtype, copy=False)
