"""GhostBatchNorm1d and GhostBatchNorm2d: BatchNorm whose training statistics come from virtual batches."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import positive_int
from .base import channel_shape
from .batchnorm import _BatchNorm
from .standardization import moments, standardize


class _GhostBatchNorm(_BatchNorm):
    r"""Ghost Batch Normalization (Hoffer et al. 2017, arXiv:1705.08741): BatchNorm whose batch
    statistics are taken over virtual ("ghost") batches.

    Training: the batch is split along N into chunks x_k of ``virtual_batch_size`` samples
    (the last one smaller when N is not a multiple, as ``torch.split`` cuts), and each chunk is
    normalised as BatchNorm would normalise it alone, with one gamma and beta for all::

        mean_k, var_k = mean_B(x_k), mean_B((x_k - mean_k)**2)      (1, C, 1...)  biased
        rstd_k  = 1 / sqrt(var_k + eps)                             (1, C, 1...)
        x_hat_k = (x_k - mean_k) * rstd_k                           (n_k, C, ...)
        y       = concat_k(x_hat_k) * gamma + beta                  (N, C, ...)

    Running statistics: one BatchNorm update per chunk, in order (chunk 1 first), so a batch of
    K chunks adds K to num_batches_tracked. This is what a BatchNorm applied chunk by chunk
    does (``torch.cat([bn(c) for c in x.split(k)])``); other implementations update once per
    batch with the chunks' averaged statistics, which gives other running statistics.
    With momentum m and K chunks the running statistics thus move K times per batch.

    Backward: each chunk's is BatchNorm's over its own statistics::

        dgamma = sum_B(dy * x_hat),   dbeta = sum_B(dy)               (C,)
        dx_k   = rstd_k * (dx_hat_k - mean_B(dx_hat_k) - x_hat_k * mean_B(dx_hat_k * x_hat_k))

    Evaluation is BatchNorm's (the running statistics, any batch size); with
    ``track_running_stats=False`` the batch statistics are used there too, per chunk.
    ``virtual_batch_size >= N`` is BatchNorm. Every chunk must hold more than one value per
    channel (checked for all chunks before anything changes). Cache: x_hat, the chunks' rstd,
    and whether the batch's statistics were used.
    """

    def __init__(self, num_features: int, virtual_batch_size: int = 8, eps: float = 1e-5,
                 momentum: float | None = 0.1, affine: bool = True, track_running_stats: bool = True,
                 dtype: DTypeLike = np.float64, *, bias: bool = True) -> None:
        self.virtual_batch_size = positive_int(virtual_batch_size, "virtual_batch_size", type(self).__name__)
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype, bias=bias)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, virtual_batch_size={self.virtual_batch_size}"

    def _chunks(self, n: int) -> list[slice]:
        """The virtual batches: slices of consecutive samples along N; an empty batch (N = 0) is
        one empty chunk, as ``torch.split`` cuts it (counted once in num_batches_tracked)."""
        k = self.virtual_batch_size
        return [slice(i, min(i + k, n)) for i in range(0, max(n, 1), k)]

    def forward(self, x: ArrayLike) -> np.ndarray:
        if not (self.training or not self.track_running_stats):
            y = super().forward(x)                                 # BatchNorm's evaluation
            x_hat, rstd, _, in_dtype = self._cache
            self._cache = (x_hat, [rstd], False, in_dtype)
            return y
        x, in_dtype = self._input(x)                               # (N, C, *L)  float16 -> float32
        B = (0,) + tuple(range(2, x.ndim))                         # every axis but the channels
        shape = channel_shape(self.num_features, x.ndim)           # (1, C, 1...)
        chunks = self._chunks(x.shape[0])
        for c in chunks:                                           # every check before any update
            self._check_batch(x[c], x[c].size // self.num_features)
        x_hat, rstds, stats = np.empty_like(x), [], []
        for c in chunks:
            mean, var, scale = moments(x[c], B)                    # (1, C, 1...)
            x_hat[c], rstd = standardize(x[c], mean, var, self.eps, scale)  # (n_k, C, *L), (1, C, 1...)
            rstds.append(rstd)
            stats.append((mean, var * scale ** 2, x[c].size // self.num_features))
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (N, C, *L)
        if self.training and self.track_running_stats:
            for mean, var, n in stats:                             # one update per chunk, in order
                self._update_running_stats(mean, var, n)
        self._cache = (x_hat, rstds, True, in_dtype)
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstds, batch_stats, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (N, C, *L)
        dx_hat = self._affine_backward(dy, x_hat)                  # (N, C, *L)  adds dgamma, dbeta
        chunks = self._chunks(x_hat.shape[0]) if batch_stats else [slice(None)]
        dx = np.empty(dx_hat.shape, dtype=np.result_type(dx_hat, rstds[0]))
        for c, rstd in zip(chunks, rstds):                         # each chunk over its own statistics
            dx[c] = self._x_hat_backward(dx_hat[c], x_hat[c], rstd, batch_stats)  # (n_k, C, *L)
        return dx.astype(in_dtype, copy=False)


class GhostBatchNorm1d(_GhostBatchNorm):
    __doc__ = f"Ghost BatchNorm for (N, C) or (N, C, L) input.\n\n{_GhostBatchNorm.__doc__}"
    _dims = (2, 3)


class GhostBatchNorm2d(_GhostBatchNorm):
    __doc__ = f"Ghost BatchNorm for (N, C, H, W) input.\n\n{_GhostBatchNorm.__doc__}"
    _dims = (4,)
