"""BatchNorm1d and BatchNorm2d: standardise each channel over the batch (and spatial) axes."""

import numpy as np

from .base import _Norm, channel_view
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

    def _normalize(self, x):
        if not self._uses_batch_stats():
            view = self._param_view(x)
            mean = self.running_mean.astype(x.dtype).reshape(view)
            rstd = 1.0 / np.sqrt(self.running_var.astype(x.dtype).reshape(view) + self.eps)
            return (x - mean) * rstd, (rstd, None)
        axes = self._stat_axes(x)
        n = int(np.prod([x.shape[a] for a in axes]))
        if n <= 1:
            raise ValueError(
                f"Expected more than 1 {self._statistic_unit} when training, got input size {tuple(x.shape)}"
            )
        if self.eps <= 0:
            raise ValueError(f"batch_norm eps must be positive during training, got eps={self.eps}")
        x_hat, mean, var, rstd = standardize(x, axes, self.eps)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var, n)
        return x_hat, (rstd, axes)

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

    def _normalize_backward(self, dx_hat, x_hat, stats):
        rstd, axes = stats
        if axes is None:  # evaluation: the running statistics are constants
            return rstd * dx_hat
        return standardize_backward(dx_hat, x_hat, rstd, axes)


class BatchNorm1d(_BatchNorm):
    __doc__ = "BatchNorm for (N, C) or (N, C, L) input; statistics over N (and L).\n" + _BatchNorm.__doc__
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    __doc__ = "BatchNorm for (N, C, H, W) input; statistics over N, H and W.\n" + _BatchNorm.__doc__
    _dims = (4,)
