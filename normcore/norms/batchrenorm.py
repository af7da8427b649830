"""BatchRenorm1d and BatchRenorm2d: BatchNorm whose batch statistics are corrected towards the running ones."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import integer, real_number
from .base import channel_shape
from .batchnorm import _BatchNorm
from .standardization import moments, standardize


def clip_limits(r_max: float, d_max: float, warmup: tuple[int, int, int] | None,
                step: int) -> tuple[float, float]:
    """(r_max, d_max) at training step ``step`` (the batches seen before this one): the final
    values without ``warmup``; with warmup = (hold, r_steps, d_steps), 1 and 0 up to step
    ``hold``, then each growing linearly to its final value at step r_steps or d_steps."""
    if warmup is None:
        return r_max, d_max
    hold, r_steps, d_steps = warmup

    def ramp(start: float, end: float, at: int) -> float:
        if step <= hold:
            return start
        if step >= at:
            return end
        return start + (end - start) * (step - hold) / (at - hold)

    return ramp(1.0, r_max, r_steps), ramp(0.0, d_max, d_steps)

class _BatchRenorm(_BatchNorm):
    r"""Batch Renormalization, as Ioffe 2017 (arXiv:1702.03275) defines it.

    Training (B = every axis but the channel axis 1; mu, sigma the running statistics)::

        mean, var = mean_B(x), mean_B((x - mean)**2)        (1, C, 1...)   the batch's, biased
        rstd  = 1 / sqrt(var + eps)                          (1, C, 1...)   sigma_B = 1 / rstd
        x_hat = (x - mean) * rstd                            (N, C, ...)
        sigma = sqrt(running_var + eps)                      (1, C, 1...)
        r = clip(sigma_B / sigma, 1 / r_max, r_max)          (1, C, 1...)   a constant: no gradient
        d = clip((mean - running_mean) / sigma, -d_max, d_max)              a constant: no gradient
        y = gamma * (x_hat * r + d) + beta                   (N, C, ...)

    then the running statistics are updated as BatchNorm's, with the raw batch statistics
    (mean and the unbiased var), never the corrected ones. r and d are computed with the
    running statistics *before* this update. Unclipped, x_hat * r + d is exactly
    (x - running_mean) / sigma: the output evaluation will give. Evaluation is BatchNorm's
    (the running statistics; r = 1, d = 0).

    Backward (dy = dL/dy); r and d are held constant (the paper's stop-gradient), so the
    input gradient is BatchNorm's with dx_hat scaled by r::

        dgamma = sum_B(dy * (x_hat * r + d)),   dbeta = sum_B(dy)       (C,)
        dx_hat = dy * gamma * r                                         (N, C, ...)
        dx     = rstd * (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat))

    ``warmup`` is None (r_max and d_max from the first step) or ``(hold, r_steps, d_steps)``:
    r_max = 1 and d_max = 0 (plain BatchNorm) for the first ``hold`` training steps, then
    growing linearly to reach ``r_max`` after ``r_steps`` steps and ``d_max`` after
    ``d_steps`` steps; the step is ``num_batches_tracked`` before the batch is counted
    (``limits()`` gives the current pair). The paper's ImageNet run used r_max = 1 and
    d_max = 0 for 5000 steps, relaxed to r_max = 3 at 40k steps and d_max = 5 at 25k, i.e.
    ``warmup=(5000, 40000, 25000)``; the paper says "gradually relaxed" without giving the
    shape of the ramp: linear is normcore's choice.

    The paper's algorithm keeps a running sigma and updates it as sigma += m * (sigma_B -
    sigma); normcore keeps BatchNorm's running_var (state dict: weight, bias, running_mean,
    running_var, num_batches_tracked, as BatchNorm's) and sigma = sqrt(running_var + eps).
    There is no ``track_running_stats`` argument: the correction needs the running statistics.
    Cache: x_hat, rstd, r, d, and whether the batch's statistics were used.
    """

    def __init__(self, num_features: int, r_max: float = 3.0, d_max: float = 5.0, eps: float = 1e-5,
                 momentum: float | None = 0.1, affine: bool = True, dtype: DTypeLike = np.float64, *,
                 bias: bool = True, warmup: tuple[int, int, int] | None = None) -> None:
        who = type(self).__name__
        self.r_max = real_number(r_max, "r_max", who, low=1.0)
        self.d_max = real_number(d_max, "d_max", who, low=0.0)
        self.warmup = warmup_arg(warmup, who)
        super().__init__(num_features, eps, momentum, affine, True, dtype, bias=bias)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, r_max={self.r_max}, d_max={self.d_max}, eps={self.eps}, "
                f"momentum={self.momentum}, affine={self.affine}, warmup={self.warmup}")

    def limits(self) -> tuple[float, float]:
        """(r_max, d_max) for the next training step: the constructor's, or during ``warmup``
        1 and 0 for ``hold`` steps, then each growing linearly to its final value."""
        return clip_limits(self.r_max, self.d_max, self.warmup, int(self.num_batches_tracked))

    def forward(self, x: ArrayLike) -> np.ndarray:
        if not self.training:
            y = super().forward(x)                                 # BatchNorm's evaluation
            x_hat, rstd, _, in_dtype = self._cache
            self._cache = (x_hat, rstd, 1.0, 0.0, False, in_dtype)
            return y
        x, in_dtype = self._input(x)                               # (N, C, *L)  float16 -> float32
        B = (0,) + tuple(range(2, x.ndim))                         # every axis but the channels
        shape = channel_shape(self.num_features, x.ndim)           # (1, C, 1...)
        n = x.size // self.num_features                            # values per channel
        self._check_batch(x, n)
        mean, var, scale = moments(x, B)                           # (1, C, 1...)  var in units of scale**2
        x_hat, rstd = standardize(x, mean, var, self.eps, scale)   # (N, C, *L), (1, C, 1...)
        r_max, d_max = self.limits()
        sigma = np.sqrt(self.running_var.reshape(shape) + self.eps)         # (1, C, 1...)
        r = np.clip((1.0 / rstd) / sigma, 1.0 / r_max, r_max)               # (1, C, 1...)  no gradient
        d = np.clip((mean - self.running_mean.reshape(shape)) / sigma, -d_max, d_max)  # (1, C, 1...)
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = (x_hat * r + d) * gamma + beta                         # (N, C, *L)
        self._update_running_stats(mean, var * scale ** 2, n)      # the raw batch statistics
        self._cache = (x_hat, rstd, r, d, True, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, r, d, batch_stats, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (N, C, *L)
        dy_gamma = self._affine_backward(dy, x_hat * r + d)        # (N, C, *L)  dy * gamma; adds dgamma, dbeta
        dx_hat = dy_gamma * r                                      # (N, C, *L)  r a constant
        dx = self._x_hat_backward(dx_hat, x_hat, rstd, batch_stats)  # (N, C, *L)
        return dx.astype(in_dtype, copy=False)


def warmup_arg(warmup: object, who: str) -> tuple[int, int, int] | None:
    """None, or (hold, r_steps, d_steps) as ints with 0 <= hold <= r_steps and hold <= d_steps."""
    if warmup is None:
        return None
    if not isinstance(warmup, (tuple, list)) or len(warmup) != 3:
        raise TypeError(f"{who}: warmup must be None or a tuple (hold, r_steps, d_steps) of three ints, "
                        f"got {warmup!r}")
    hold, r_steps, d_steps = (integer(s, "warmup", who) for s in warmup)
    if not 0 <= hold <= min(r_steps, d_steps):
        raise ValueError(f"{who}: warmup (hold, r_steps, d_steps) needs 0 <= hold <= r_steps and "
                         f"hold <= d_steps, got {tuple(warmup)}")
    return hold, r_steps, d_steps


class BatchRenorm1d(_BatchRenorm):
    __doc__ = f"Batch Renorm for (N, C) or (N, C, L) input; statistics over N (and L).\n\n{_BatchRenorm.__doc__}"
    _dims = (2, 3)


class BatchRenorm2d(_BatchRenorm):
    __doc__ = f"Batch Renorm for (N, C, H, W) input; statistics over N, H and W.\n\n{_BatchRenorm.__doc__}"
    _dims = (4,)
