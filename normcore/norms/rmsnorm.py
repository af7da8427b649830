"""RMSNorm: LayerNorm without the mean (no re-centring, no beta)."""

import numpy as np

from .._array import sum_over
from .base import _TrailingAxesNorm
from .layernorm import _count


class RMSNorm(_TrailingAxesNorm):
    r"""Root-mean-square normalisation over the last ``len(normalized_shape)`` axes (D).

    Forward::

        ms    = mean_D(x**2)                 (*, 1, ..., 1)   the mean square, not a variance
        rrms  = 1 / sqrt(ms + eps)           (*, 1, ..., 1)   eps inside the square root
        x_hat = x * rrms                     (*, normalized_shape)
        y     = x_hat * gamma                gamma: normalized_shape

    Backward, with dx_hat = dy * gamma::

        dgamma = sum over the leading axes of dy * x_hat
        dx     = rrms * (dx_hat - x_hat * mean_D(dx_hat * x_hat))
               = rrms * dx_hat - x * rrms**3 * mean_D(dx_hat * x)

    It is LayerNorm's backward without the ``- mean_D(dx_hat)`` term, because no mean was
    subtracted. ``eps=None`` uses the machine epsilon of the compute dtype (float32's for
    float16 inputs), as PyTorch does. The RMS divides by n (the mean of squares), not by n - 1,
    and eps is added before the square root, not to the RMS. Cache: x_hat and rrms.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        self._set_normalized_shape(normalized_shape)
        self.eps = None if eps is None else float(eps)
        self.elementwise_affine = elementwise_affine
        self._make_affine(self.normalized_shape, elementwise_affine, False, dtype)

    def _normalize(self, x, out):
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        ms = sum_over(x, self._axes, times=x) / _count(x, self._axes)
        rrms = 1.0 / np.sqrt(ms + eps)
        np.multiply(x, rrms, out=out)  # x_hat
        return rrms

    def _normalize_backward(self, dx_hat, x_hat, rrms, out):
        mean_dx_hat_x_hat = sum_over(dx_hat, self._axes, times=x_hat) / _count(x_hat, self._axes)
        dx = np.multiply(x_hat, mean_dx_hat_x_hat, out=out)
        np.subtract(dx_hat, dx, out=dx)
        dx *= rrms
