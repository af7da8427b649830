"""GroupNorm and InstanceNorm: LayerNorm's arithmetic on groups of channels, by reshaping."""

import numpy as np

from .._array import float_input
from .base import _Norm, channel_view
from .batchnorm import _BatchNorm
from .layernorm import standardize, standardize_backward


class GroupNorm(_Norm):
    r"""Group normalisation: each sample's C channels are split into G contiguous groups of C/G
    channels, and each group is standardised over its channels and spatial positions.

    With xg = x.reshape(N, G, (C/G) * spatial) and its last axis as the normalised axis::

        mean  = mean(xg),  var = mean((xg - mean)**2),  rstd = 1 / sqrt(var + eps)   (N, G, 1)
        x_hat = ((xg - mean) * rstd).reshape(x.shape)                                (N, C, *)
        y     = x_hat * gamma + beta                  gamma, beta: (C,), one per channel

    Backward (dx_hat = dy * gamma), LayerNorm's backward on the same reshape::

        dgamma = sum over N and spatial of dy * x_hat,   dbeta = sum of dy
        dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))   per group

    G = 1 is LayerNorm over (C, *spatial) with per-channel affine; G = C is InstanceNorm.
    Training and evaluation behave the same. Cache: x_hat and rstd.
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        if self.num_groups < 1 or self.num_channels < 1:
            raise ValueError(f"num_groups and num_channels must be positive, got {num_groups} and {num_channels}")
        if self.num_channels % self.num_groups:
            raise ValueError(
                f"num_channels ({self.num_channels}) must be divisible by num_groups ({self.num_groups})"
            )
        self.eps = float(eps)
        self.affine = affine
        self._make_affine((self.num_channels,), affine, affine, dtype)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"

    def _check_shape(self, x):
        if x.ndim < 2 or x.shape[1] != self.num_channels:
            raise ValueError(
                f"GroupNorm({self.num_groups}, {self.num_channels}) expected input of shape "
                f"(N, {self.num_channels}, *), got {x.shape}"
            )

    def _param_view(self, x):
        return channel_view(self.num_channels, x.ndim)

    def _rows(self, x):
        return x  # each sample (N, C, *) is normalised on its own

    def _grouped(self, a):
        """(n, C, *) -> (n, G, (C/G) * spatial). The ``out`` blocks are row slices of fresh arrays,
        hence contiguous, so their reshapes are views and writes land in place."""
        return a.reshape(a.shape[0], self.num_groups, -1)

    def _normalize(self, x, out):
        _, _, _, rstd = standardize(self._grouped(x), -1, self.eps, out=self._grouped(out))
        return rstd

    def _normalize_backward(self, dx_hat, x_hat, rstd, out):
        standardize_backward(self._grouped(dx_hat), self._grouped(x_hat), rstd, -1, out=self._grouped(out))


class _InstanceNorm(_BatchNorm):
    r"""Instance normalisation: each (sample, channel) pair standardised over its spatial axes S.

    Training (or ``track_running_stats=False``)::

        mean = mean_S(x), var = mean_S((x - mean)**2)             (N, C, 1...)
        x_hat = (x - mean) / sqrt(var + eps),  y = x_hat * gamma + beta   (affine=True)
        dx = rstd * (dx_hat - mean_S(dx_hat) - x_hat * mean_S(dx_hat * x_hat))

    This is GroupNorm with one channel per group. With ``track_running_stats=True`` it keeps
    BatchNorm's running statistics (the per-instance statistics averaged over the batch,
    unbiased variance) and uses them in evaluation. Defaults follow PyTorch: ``affine=False``,
    ``track_running_stats=False``. As in PyTorch, ``num_batches_tracked`` stays 0 and
    ``momentum=None`` leaves the running statistics unchanged. An unbatched input
    (C, *spatial) is accepted. Unlike PyTorch, which only warns, a channel count other than
    ``num_features`` raises.
    """

    _statistic_unit = "spatial element"

    @property
    def _unbatched_note(self):
        return f" or unbatched {min(self._dims) - 1}D"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 dtype=np.float64):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)

    def _stat_axes(self, x):
        return tuple(range(2, x.ndim))

    def _next_momentum(self):
        # As in PyTorch: InstanceNorm never counts batches, and momentum=None means m = 0.
        return 0.0 if self.momentum is None else self.momentum

    def forward(self, x):
        x = float_input(x, type(self).__name__)
        self._unbatched = x.ndim == min(self._dims) - 1
        if self._unbatched:
            return super().forward(x[None])[0]
        return super().forward(x)

    def backward(self, dy):
        self._cached()
        if self._unbatched:
            return super().backward(np.asarray(dy)[None])[0]
        return super().backward(dy)


class InstanceNorm1d(_InstanceNorm):
    __doc__ = "InstanceNorm for (N, C, L) or unbatched (C, L) input.\n" + _InstanceNorm.__doc__
    _dims = (3,)


class InstanceNorm2d(_InstanceNorm):
    __doc__ = "InstanceNorm for (N, C, H, W) or unbatched (C, H, W) input.\n" + _InstanceNorm.__doc__
    _dims = (4,)
