"""BatchNorm1d and BatchNorm2d: standardise each channel over the batch (and spatial) axes."""

import numpy as np

from .base import _Norm, channel_view, row_blocks
from .layernorm import standardize, standardize_backward


class _BatchNorm(_Norm):
    r"""Batch normalisation of each channel c over B = every axis but the channel axis 1.

    Training (statistics of this batch; n = numel / C values per channel)::

        mean  = mean_B(x)                       (1, C, 1...)
        var   = mean_B((x - mean)**2)           (1, C, 1...)  biased: divide by n
        rstd  = 1 / sqrt(var + eps)             (1, C, 1...)
        x_hat = (x - mean) * rstd               (N, C, ...)
        y     = x_hat * gamma + beta            gamma, beta: (C,)

        running_mean = (1 - momentum) * running_mean + momentum * mean
        running_var  = (1 - momentum) * running_var  + momentum * var * n / (n - 1)   unbiased
        (momentum=None: momentum = 1 / num_batches_tracked, the plain average of all batches)

    Evaluation (running statistics, constants)::

        x_hat = (x - running_mean) / sqrt(running_var + eps)

    Backward, with dx_hat = dy * gamma::

        dgamma = sum_B(dy * x_hat),   dbeta = sum_B(dy)
        training:   dx = rstd * (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat))
        evaluation: dx = rstd * dx_hat        (the statistics do not depend on x)

    ``track_running_stats=False`` keeps no running statistics and uses the batch's in
    evaluation too. Note the momentum convention: ``momentum`` weights the *new* batch
    (0.1 here is 0.9 in the "decay" convention of some other frameworks).
    Cache: x_hat and rstd.
    """

    _dims = ()  # allowed input ranks, set by subclasses
    _statistic_unit = "value per channel"
    _unbatched_note = ""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features = int(num_features)
        if self.num_features < 1:
            raise ValueError(f"num_features must be a positive int, got {num_features}")
        self.eps = float(eps)
        if momentum is not None and not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be None or in [0, 1], got {momentum}")
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        self._make_affine((self.num_features,), affine, affine, dtype)
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(self.num_features, dtype=dtype))
            self.register_buffer("running_var", np.ones(self.num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")

    def _check_shape(self, x):
        if x.ndim not in self._dims:
            dims = " or ".join(f"{d}D" for d in self._dims) + self._unbatched_note
            raise ValueError(f"{type(self).__name__} expected {dims} input (got {x.ndim}D input)")
        if x.shape[1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}({self.num_features}) expected input with {self.num_features} "
                f"channels on axis 1, got input of shape {x.shape}"
            )

    def _param_view(self, x):
        return channel_view(self.num_features, x.ndim)

    def _stat_axes(self, x):
        """B: the axes each channel's statistics are taken over."""
        return (0,) + tuple(range(2, x.ndim))

    def _uses_batch_stats(self):
        return self.training or not self.track_running_stats

    def _normalize(self, x, out):
        if not self._uses_batch_stats():
            view = self._param_view(x)
            mean = self.running_mean.astype(x.dtype).reshape(view)
            rstd = 1.0 / np.sqrt(self.running_var.astype(x.dtype).reshape(view) + self.eps)
            np.multiply(np.subtract(x, mean, out=out), rstd, out=out)  # x_hat = (x - mean) * rstd
            return rstd, None
        axes = self._stat_axes(x)
        n = int(np.prod([x.shape[a] for a in axes]))
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 {self._statistic_unit} when training, got input size {tuple(x.shape)}"
            )
        if self.eps <= 0:
            raise ValueError(f"batch_norm eps must be positive during training, got eps={self.eps}")
        _, mean, var, rstd = standardize(x, axes, self.eps, out=out)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var, n)
        return rstd, axes

    def _update_running_stats(self, mean, var, n):
        """running = (1 - m) * running + m * batch, with the unbiased variance var * n / (n - 1)."""
        m = self._next_momentum()
        # mean and var have kept dims; average any per-sample statistics (InstanceNorm) over N.
        batch_mean = mean.reshape(-1, self.num_features).mean(axis=0)
        batch_var = var.reshape(-1, self.num_features).mean(axis=0) * (n / (n - 1))
        self.running_mean[...] = (1 - m) * self.running_mean + m * batch_mean
        self.running_var[...] = (1 - m) * self.running_var + m * batch_var

    def _next_momentum(self):
        """Count this batch and return its weight m: momentum, or 1 / num_batches_tracked."""
        self.num_batches_tracked += 1
        return 1.0 / float(self.num_batches_tracked) if self.momentum is None else self.momentum

    def _normalize_backward(self, dx_hat, x_hat, stats, out):
        rstd, axes = stats
        if axes is None:  # evaluation: the running statistics are constants
            np.multiply(dx_hat, rstd, out=out)
        else:
            standardize_backward(dx_hat, x_hat, rstd, axes, out=out)


class _BatchStatsNorm(_BatchNorm):
    """BatchNorm proper: statistics over every axis but the channels, the axes gamma is broadcast on."""

    def backward(self, dy):
        r"""In training, gamma and rstd are constant over the axes B the statistics run over, so
        the sums the parameters' gradients need are the ones the input's gradient needs::

            mean_B(dx_hat) = gamma * dbeta / n,   mean_B(dx_hat * x_hat) = gamma * dgamma / n
            dx = (gamma * rstd) * (dy - dbeta / n - x_hat * dgamma / n)

        the general backward with gamma folded into rstd: no dx_hat = dy * gamma pass and no
        second pair of reductions over the batch.
        """
        x_hat, _, [(rstd, axes)], in_dtype, view = self._cached()
        if axes is None or self.weight is None or self.bias is None:  # evaluation or no affine: general path
            return super().backward(dy)
        dy = self._upstream(dy, x_hat)
        dbeta, dgamma = self._affine_backward(dy, x_hat, view)  # (1, C, 1...) each
        n = x_hat.size // self.num_features
        gamma = self.weight.data.astype(x_hat.dtype, copy=False).reshape(view)
        dx = np.empty_like(x_hat)
        means = (dbeta / n, dgamma / n)  # mean_B(dx_hat) and mean_B(dx_hat * x_hat), divided by gamma
        for blk in row_blocks(x_hat):  # with the means known, what is left is elementwise: in blocks
            standardize_backward(dy[blk], x_hat[blk], gamma * rstd, axes, out=dx[blk], means=means)
        return dx.astype(in_dtype, copy=False)


class BatchNorm1d(_BatchStatsNorm):
    __doc__ = "BatchNorm for (N, C) or (N, C, L) input; statistics over N (and L).\n" + _BatchNorm.__doc__
    _dims = (2, 3)


class BatchNorm2d(_BatchStatsNorm):
    __doc__ = "BatchNorm for (N, C, H, W) input; statistics over N, H and W.\n" + _BatchNorm.__doc__
    _dims = (4,)
