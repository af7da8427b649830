"""DyT: Dynamic Tanh, an element-wise squashing in place of LayerNorm (no statistics at all)."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import ShapeLike, real_number, sech2
from ..module import Parameter
from .base import _TrailingAxesNorm, flag, param_dtype


class DyT(_TrailingAxesNorm):
    r"""Dynamic Tanh (Zhu, Chen, He, LeCun and Liu, "Transformers without Normalization", CVPR
    2025), a drop-in replacement for LayerNorm over the last ``len(normalized_shape)`` axes D.

    Forward (``*`` the leading axes; alpha is one scalar shared by every value)::

        u = alpha * x                             (*, normalized_shape)   alpha: (1,)
        t = tanh(u)                               (*, normalized_shape)
        y = gamma * t + beta                      gamma, beta: normalized_shape

    Backward (dy = dL/dy, the shape of y)::

        dgamma = sum_*(dy * t)                    normalized_shape
        dbeta  = sum_*(dy)                        normalized_shape
        dt     = dy * gamma                       (*, normalized_shape)
        du     = dt * (1 - t**2)                  (*, normalized_shape)   tanh' written with t, not x
        dx     = alpha * du                       (*, normalized_shape)
        dalpha = sum_all(du * x)                  (1,)   over EVERY element: batch and channels

    There is no reduction over D, no mean and no variance: each output depends on its own
    input only, so dx = alpha * gamma * (1 - t**2) * dy element by element, with none of the
    cross-element terms of LayerNorm's ``- mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat)``
    (compare ``normcore explain dyt`` with ``normcore explain layernorm``). The paper's
    motivation: a trained Transformer's LayerNorm maps inputs to outputs along S-shaped,
    tanh-like curves, nearly linear for most values and squashing the extreme ones; DyT keeps
    the shape and drops the statistics. The common mistake is tanh' = 1 - x**2 (the input)
    instead of 1 - t**2 (the output). As alpha is one scalar, its gradient sums over
    everything it multiplied; gamma's and beta's sum over the leading axes only.

    ``alpha_init`` is alpha's starting value (0.5, as in the paper's code); ``bias=False``
    drops beta, ``elementwise_affine=False`` drops gamma and beta (alpha stays). The state dict
    holds alpha, weight, bias in that order. Training and evaluation behave the same. float16
    inputs are computed in float32 and cast back once; alpha, gamma and beta are used in the
    compute dtype, and their gradients added in their own. 1 - t**2 is computed as
    sech(u)**2 (``sech2``, the same function ``Tanh`` uses), which keeps its relative accuracy
    where t is near +-1. Cache: x, t and the slope 1 - t**2.

    ``normcore.fast`` has no DyT: the layer is already one element-wise pass, with no
    reduction for a blocked kernel to save, so a Transformer's ``norm_tier="fast"`` uses this
    class too.
    """

    alpha: Parameter

    def __init__(self, normalized_shape: ShapeLike, alpha_init: float = 0.5, elementwise_affine: bool = True,
                 bias: bool = True, dtype: DTypeLike = np.float64) -> None:
        self._set_normalized_shape(normalized_shape)
        self.alpha_init = real_number(alpha_init, "alpha_init", "DyT")
        self.elementwise_affine = flag(elementwise_affine, "elementwise_affine", "DyT")
        bias = flag(bias, "bias", "DyT")
        self.alpha = Parameter(np.full(1, self.alpha_init), dtype=param_dtype(dtype, "DyT"))
        self._make_affine(self.normalized_shape, self.elementwise_affine, self.elementwise_affine and bias, dtype)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, alpha_init={self.alpha_init}, "
                f"elementwise_affine={self.elementwise_affine}")

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (*, ns)  float16 -> float32
        alpha = self.alpha.data.astype(x.dtype, copy=False)        # (1,)
        u = alpha * x                                              # (*, ns)
        t = np.tanh(u)                                             # (*, ns)
        slope = sech2(u)                                           # (*, ns)  1 - t**2, without cancellation
        gamma, beta = self._gamma_beta(x.dtype, self.normalized_shape)  # (ns), (ns)
        y = gamma * t + beta                                       # (*, ns)
        self._cache = (x.copy(), t, slope, in_dtype)               # x copied: never the caller's array
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x, t, slope, in_dtype = self._cached()
        dy = self._upstream(dy, t)                                 # (*, ns)
        lead = tuple(range(t.ndim - len(self._axes)))              # the axes gamma is shared over
        dgamma = (dy * t).sum(axis=lead, dtype=np.float64)         # (ns)
        dbeta = dy.sum(axis=lead, dtype=np.float64)                # (ns)
        self._add_grads(dgamma, dbeta)
        gamma, _ = self._gamma_beta(t.dtype, self.normalized_shape)  # (ns)
        alpha = self.alpha.data.astype(t.dtype, copy=False)        # (1,)
        dt = dy * gamma                                            # (*, ns)
        du = dt * slope                                            # (*, ns)  = dt * (1 - t**2)
        dx = alpha * du                                            # (*, ns)
        dalpha = (du * x).sum(dtype=np.float64)                    # ()  over every element
        self.alpha.grad += dalpha.reshape(1).astype(self.alpha.dtype, copy=False)
        return dx.astype(in_dtype, copy=False)
