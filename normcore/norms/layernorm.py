"""LayerNorm (Ba, Kiros & Hinton 2016): each sample standardised over its last axes."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import ShapeLike
from .base import _TrailingAxesNorm, eps_arg, flag
from .standardization import moments, standardize, standardize_backward


class LayerNorm(_TrailingAxesNorm):
    r"""Layer normalisation: each sample is standardised over its last ``len(normalized_shape)`` axes D.

    Forward (n = prod(normalized_shape) values per sample; ``*`` the leading axes)::

        mean  = mean_D(x)                         (*, 1, ..., 1)
        var   = mean_D((x - mean)**2)             (*, 1, ..., 1)   biased: divide by n
        rstd  = 1 / sqrt(var + eps)               (*, 1, ..., 1)   eps inside the square root
        x_hat = (x - mean) * rstd                 (*, normalized_shape)
        y     = x_hat * gamma + beta              gamma, beta: normalized_shape

    Backward (dy = dL/dy, the shape of y)::

        dgamma = sum_*(dy * x_hat)                normalized_shape
        dbeta  = sum_*(dy)                        normalized_shape
        dx_hat = dy * gamma                       (*, normalized_shape)
        dx     = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat))

    The three terms of dx are the three paths from x to x_hat: directly, through the mean and
    through the variance (derivation: ``normcore explain layernorm``). Training and evaluation
    behave the same. ``bias=False`` drops beta, ``elementwise_affine=False`` drops both.
    Cache: x_hat and rstd. The variance is carried in units of a power of two (see
    ``moments``), so float64 inputs near 1e200 are standardised correctly, where PyTorch 2.13
    returns NaN or beta.
    """

    def __init__(self, normalized_shape: ShapeLike, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, dtype: DTypeLike = np.float64) -> None:
        self._set_normalized_shape(normalized_shape)
        self.eps = eps_arg(eps, "LayerNorm")
        self.elementwise_affine = flag(elementwise_affine, "elementwise_affine", "LayerNorm")
        bias = flag(bias, "bias", "LayerNorm")
        self._make_affine(self.normalized_shape, self.elementwise_affine, self.elementwise_affine and bias, dtype)

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (*, ns)  float16 -> float32
        D = self._axes                                             # the last len(ns) axes
        mean, var, scale = moments(x, D)                           # (*, 1)  var in units of scale**2
        x_hat, rstd = standardize(x, mean, var, self.eps, scale)   # (*, ns), (*, 1)
        gamma, beta = self._gamma_beta(x.dtype, self.normalized_shape)  # (ns), (ns)
        y = x_hat * gamma + beta                                   # (*, ns)
        self._cache = (x_hat, rstd, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (*, ns)
        D = self._axes
        lead = tuple(range(x_hat.ndim - len(D)))                   # the axes * gamma is shared over
        dgamma = (dy * x_hat).sum(axis=lead, dtype=np.float64)     # (ns)
        dbeta = dy.sum(axis=lead, dtype=np.float64)                # (ns)
        self._add_grads(dgamma, dbeta)
        gamma, _ = self._gamma_beta(x_hat.dtype, self.normalized_shape)  # (ns)
        dx_hat = dy * gamma                                        # (*, ns)
        dx = standardize_backward(dx_hat, x_hat, rstd, D)          # (*, ns)
        return dx.astype(in_dtype, copy=False)
