"""GroupNorm and InstanceNorm: LayerNorm's arithmetic on groups of channels, by reshaping."""

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import positive_int
from .base import _Norm, channel_shape, eps_arg
from .standardization import moments, standardize, standardize_backward


class GroupNorm(_Norm):
    r"""Group normalisation: each sample's C channels are split into G contiguous groups of C/G
    channels, and each group is standardised over its channels and spatial positions S.

    On the reshape xg = x.reshape(N, G, C/G, *S), with A = its axes 2, 3, ... (a group)::

        mean  = mean_A(xg),  var = mean_A((xg - mean)**2)        (N, G, 1, 1...)
        rstd  = 1 / sqrt(var + eps)                              (N, G, 1, 1...)
        x_hat = ((xg - mean) * rstd).reshape(x.shape)            (N, C, *S)
        y     = x_hat * gamma + beta                  gamma, beta: (C,), one per channel

    Backward, LayerNorm's on the same reshape (dx_hat = dy * gamma)::

        dgamma = sum over N and S of dy * x_hat,   dbeta = the same sum of dy      (C,)
        dx = rstd * (dx_hat - mean_A(dx_hat) - x_hat * mean_A(dx_hat * x_hat))     per group

    G = 1 is LayerNorm over (C, *S) with a per-channel affine; G = C is InstanceNorm.
    ``bias=False`` drops beta (and dbeta), ``affine=False`` both. Training and evaluation
    behave the same. As in PyTorch, an input with one value per channel over the whole batch
    (N * C/G * prod(S) = 1) raises. Cache: x_hat and rstd.
    Float64 inputs near 1e200 are standardised correctly (see ``moments``); PyTorch 2.13
    returns NaN or beta there.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        self.num_groups = positive_int(num_groups, "num_groups", "GroupNorm")
        self.num_channels = positive_int(num_channels, "num_channels", "GroupNorm")
        if self.num_channels % self.num_groups:
            raise ValueError(
                f"num_channels ({self.num_channels}) must be divisible by num_groups ({self.num_groups})"
            )
        self.eps = eps_arg(eps, "GroupNorm")
        self._make_channel_affine(self.num_channels, affine, bias, dtype)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")

    def _check_shape(self, x: np.ndarray) -> None:
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(f"GroupNorm({self.num_groups}, {self.num_channels}) expected input of shape "
                             f"(N, {self.num_channels}, *), got {x.shape}")
        if x.shape[0] * (self.num_channels // self.num_groups) * math.prod(x.shape[2:]) == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {x.shape}")

    def _grouped(self, a: np.ndarray) -> np.ndarray:
        """(N, C, *S) -> (N, G, C/G, *S): one group of channels per row of axis 1."""
        return a.reshape(a.shape[0], self.num_groups, self.num_channels // self.num_groups, *a.shape[2:])

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (N, C, *S)  float16 -> float32
        xg = self._grouped(x)                                      # (N, G, C/G, *S)
        A = tuple(range(2, xg.ndim))                               # a group: its channels and positions
        mean, var, scale = moments(xg, A)                          # (N, G, 1, 1...)  var in units of scale**2
        x_hat, rstd = standardize(xg, mean, var, self.eps, scale)  # (N, G, C/G, *S), (N, G, 1, 1...)
        x_hat = x_hat.reshape(x.shape)                             # (N, C, *S)
        gamma, beta = self._gamma_beta(x.dtype, channel_shape(self.num_channels, x.ndim))  # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (N, C, *S)
        self._cache = (x_hat, rstd, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (N, C, *S)
        NS = (0,) + tuple(range(2, x_hat.ndim))                    # every axis but the channels
        dgamma = (dy * x_hat).sum(axis=NS, dtype=np.float64)       # (C,)
        dbeta = dy.sum(axis=NS, dtype=np.float64)                  # (C,)
        self._add_grads(dgamma, dbeta)
        gamma, _ = self._gamma_beta(x_hat.dtype, channel_shape(self.num_channels, x_hat.ndim))
        dx_hat = self._grouped(dy * gamma)                         # (N, G, C/G, *S)
        A = tuple(range(2, dx_hat.ndim))                           # a group
        dx = standardize_backward(dx_hat, self._grouped(x_hat), rstd, A)  # (N, G, C/G, *S)
        return dx.reshape(x_hat.shape).astype(in_dtype, copy=False)


class _InstanceNorm(_Norm):
    r"""Instance normalisation: each (sample, channel) pair standardised over its spatial axes S.

    Training (or ``track_running_stats=False``), GroupNorm with one channel per group::

        mean  = mean_S(x),  var = mean_S((x - mean)**2)          (N, C, 1...)
        x_hat = (x - mean) / sqrt(var + eps)                     (N, C, *S)
        y     = x_hat * gamma + beta                             (affine=True; no beta with bias=False)
        dx    = rstd * (dx_hat - mean_S(dx_hat) - x_hat * mean_S(dx_hat * x_hat))

    With ``track_running_stats=True`` it keeps BatchNorm's running statistics (the
    per-sample statistics averaged over the batch, unbiased variance) and uses them in
    evaluation, where dx = rstd * dx_hat. Defaults follow PyTorch: ``affine=False``,
    ``track_running_stats=False``. As in PyTorch, ``num_batches_tracked`` stays 0 and
    ``momentum=None`` leaves the running statistics unchanged. An unbatched input
    (C, *S) is accepted. Empty inputs give empty results; with no spatial positions the
    running statistics stay unchanged, as in PyTorch. Unlike PyTorch, which only warns, a
    channel count other than ``num_features`` raises; and an empty batch (N = 0), on which
    PyTorch 2.13 fails with an IndexError when ``affine=True``, gives an empty result.
    Cache: x_hat, rstd, and whether the instance statistics were used.
    """

    _counts_batches = False
    _ndim = 0  # the batched input's rank, set by each subclass

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        self._make_channel_norm(num_features, eps, momentum, affine, track_running_stats, dtype, bias)

    def _check_shape(self, x: np.ndarray) -> None:
        who, d = type(self).__name__, self._ndim
        if x.ndim not in (d - 1, d):
            raise ValueError(f"{who} expected {d}D or unbatched {d - 1}D input (got {x.ndim}D input)")
        axis = x.ndim - d + 1  # 1, or 0 for an unbatched input
        if x.shape[axis] != self.num_features:
            raise ValueError(f"{who}({self.num_features}) expected input with {self.num_features} "
                             f"channels on axis {axis}, got input of shape {x.shape}")

    def _check_instances(self, x: np.ndarray, n: int) -> None:
        """The error PyTorch raises when each instance has one value (n = 1) to take statistics of."""
        if n == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size {x.shape}")

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (N, C, *S) or unbatched (C, *S)
        xb = x if x.ndim == self._ndim else x[None]                # (N, C, *S)
        S = tuple(range(2, xb.ndim))                               # the spatial axes
        shape = channel_shape(self.num_features, xb.ndim)          # (1, C, 1...)
        instance_stats = self.training or not self.track_running_stats
        n = math.prod(xb.shape[2:])                                # values per instance
        if instance_stats:
            self._check_instances(x, n)
            mean, var, scale = moments(xb, S)                      # (N, C, 1...)  var in units of scale**2
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
            scale = np.ones(shape)                                 # (1, C, 1...)  var as it is
        x_hat, rstd = standardize(xb, mean, var, self.eps, scale)  # (N, C, *S), (N or 1, C, 1...)
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (N, C, *S)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var * scale ** 2, n)
        self._cache = (x_hat.reshape(x.shape), rstd, instance_stats, in_dtype)
        return y.reshape(x.shape).astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, instance_stats, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # x's shape
        x_shape = x_hat.shape
        if x_hat.ndim < self._ndim:                                # unbatched: a batch of one
            x_hat, dy = x_hat[None], dy[None]                      # (1, C, *S)
        NS = (0,) + tuple(range(2, x_hat.ndim))                    # every axis but the channels
        dgamma = (dy * x_hat).sum(axis=NS, dtype=np.float64)       # (C,)
        dbeta = dy.sum(axis=NS, dtype=np.float64)                  # (C,)
        self._add_grads(dgamma, dbeta)
        gamma, _ = self._gamma_beta(x_hat.dtype, channel_shape(self.num_features, x_hat.ndim))
        dx_hat = dy * gamma                                        # (N, C, *S)
        if instance_stats:
            dx = standardize_backward(dx_hat, x_hat, rstd, NS[1:])  # (N, C, *S)
        else:
            dx = rstd * dx_hat                                     # (N, C, *S)  constant statistics
        return dx.reshape(x_shape).astype(in_dtype, copy=False)


class InstanceNorm1d(_InstanceNorm):
    __doc__ = f"InstanceNorm for (N, C, L) or unbatched (C, L) input.\n\n{_InstanceNorm.__doc__}"
    _ndim = 3


class InstanceNorm2d(_InstanceNorm):
    __doc__ = f"InstanceNorm for (N, C, H, W) or unbatched (C, H, W) input.\n\n{_InstanceNorm.__doc__}"
    _ndim = 4


class InstanceNorm3d(_InstanceNorm):
    __doc__ = f"InstanceNorm for (N, C, D, H, W) or unbatched (C, D, H, W) input.\n\n{_InstanceNorm.__doc__}"
    _ndim = 5
