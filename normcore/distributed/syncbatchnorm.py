"""SyncBatchNorm: BatchNorm whose statistics are taken over the whole batch, split across workers."""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from ..norms.base import channel_shape
from ..norms.batchnorm import _BatchNorm
from ..norms.standardization import standardize, standardize_backward_from_means


class SyncBatchNorm(_BatchNorm):
    r"""BatchNorm over a batch split across the workers of ``process_group``; each worker holds
    one replica of the layer and calls it on its own shard x_k (n_k values per channel, n_k may
    be 0), and every worker gets what BatchNorm gives on the concatenated batch (N = sum_k n_k)::

        forward, round 1:   [N, S]   = all_reduce([n_k, sum_B(x_k)])            1 + C values
                            mean     = S / N                                    (1, C, 1...)
        forward, round 2:   M2       = all_reduce(sum_B((x_k - mean)**2))       C values
                            var      = M2 / N                                   biased
                            x_hat, y = standardize(x_k, mean, var, eps), x_hat * gamma + beta
                            running_var gets var * N / (N - 1): the GLOBAL count

        backward:           [dbeta, dgamma] = all_reduce([sum_B(dy_k), sum_B(dy_k * x_hat_k)])  2C values
                            dx_k = rstd * (dx_hat_k - gamma * dbeta / N - x_hat_k * gamma * dgamma / N)

    Why two rounds in the forward: the one-round sums [n, sum x, sum x**2] give the variance as
    E[x**2] - E[x]**2, which cancels catastrophically when the mean is large against the spread
    (a shard at 1e4 with a spread of 1 loses 8 of float64's 16 digits). Round 2 sums squared
    deviations from the *global* mean instead, BatchNorm's own two-pass formula run across
    workers. It equals Chan's parallel merge, sum_k [M2_k + n_k * (mean_k - mean)**2] with M2_k
    each worker's squared deviations from its own mean, written as one sum per worker. (PyTorch
    gathers each worker's (mean, invstd, count) and merges them in one round; an all_reduce
    that can only SUM needs the global mean first.)

    Gradients: ``backward`` returns dL/dx_k for this worker's shard and adds to gamma.grad and
    beta.grad this worker's *local* contributions, sum_B(dy_k * x_hat_k) and sum_B(dy_k); their
    sum over the workers is BatchNorm's dgamma and dbeta on the concatenated batch (data-parallel
    training then all-reduces the parameters' gradients, as it does for every other layer).
    dy_k is the gradient of the loss summed over the workers: scale it as the loss is scaled.

    Evaluation: the running statistics, no communication, exactly BatchNorm's. As in PyTorch,
    evaluation with ``track_running_stats=False`` uses this worker's own shard's statistics
    (no communication either). Every worker must call forward (and backward) together, in
    training mode, with the same number of channels; an error that depends on the global batch
    (N = 1 value per channel) is raised by every worker. Variances beyond float64's range (|x|
    ~1e154) overflow to inf here, as in PyTorch (BatchNorm rescales them; see ``moments``).
    """

    _dims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group: Any = None,
                 dtype: DTypeLike = np.float64) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)
        if process_group is None or not callable(getattr(process_group, "all_reduce", None)):
            raise TypeError("SyncBatchNorm needs a process_group with all_reduce(vector), rank and world_size "
                            f"(an InProcessGroup worker or a TorchGroup), got {process_group!r}")
        self.process_group = process_group
        self._synced = False  # whether the last forward communicated (training) or not (evaluation)

    def forward(self, x: ArrayLike) -> np.ndarray:
        if not self.training:                                      # evaluation: BatchNorm's, no messages
            y = super().forward(x)
            self._synced = False
            return y
        x, in_dtype = self._input(x)                               # (n_k, C, *L)  float16 -> float32
        B = (0,) + tuple(range(2, x.ndim))                         # every axis but the channels
        shape = channel_shape(self.num_features, x.ndim)           # (1, C, 1...)
        n_k = x.size // self.num_features                          # this worker's values per channel
        sent = np.concatenate([[n_k], x.sum(axis=B, dtype=np.float64)])           # (1 + C,)
        got = self.process_group.all_reduce(sent, name="forward 1/2: [n_k, sum x_k per channel]")
        N, mean = int(got[0]), got[1:].reshape(shape) / max(got[0], 1)          # (1, C, 1...)
        self._check_batch(x, N)                                    # N = 1: every worker raises
        sent = np.square(x - mean, dtype=np.float64).sum(axis=B)                 # (C,)
        got = self.process_group.all_reduce(sent, name="forward 2/2: sum (x_k - mean)**2 per channel")
        var = got.reshape(shape) / max(N, 1)                       # (1, C, 1...)  biased
        x_hat, rstd = standardize(x, mean, var, self.eps)          # (n_k, C, *L), (1, C, 1...)
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (n_k, C, *L)
        if self.track_running_stats:
            self._update_running_stats(mean, var, N)               # unbiased with N / (N - 1)
        self._cache, self._synced = (x_hat, rstd, N, in_dtype), True
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        if not self._synced:                                       # after an evaluation forward
            return super().backward(dy)
        x_hat, rstd, N, in_dtype = self._cached()
        dy = self._upstream(dy, x_hat)                             # (n_k, C, *L)
        B = (0,) + tuple(range(2, x_hat.ndim))                     # every axis but the channels
        shape = channel_shape(self.num_features, x_hat.ndim)       # (1, C, 1...)
        dbeta_k = dy.sum(axis=B, dtype=np.float64)                 # (C,)  this worker's share
        dgamma_k = (dy * x_hat).sum(axis=B, dtype=np.float64)      # (C,)
        got = self.process_group.all_reduce(np.concatenate([dbeta_k, dgamma_k]),
                                            name="backward: [sum dy_k, sum dy_k * x_hat_k per channel]")
        dbeta, dgamma = got[:self.num_features], got[self.num_features:]        # (C,) over all workers
        self._add_grads(dgamma_k, dbeta_k)                         # local shares (see the docstring)
        gamma, _ = self._gamma_beta(x_hat.dtype, shape)            # (1, C, 1...)
        dx_hat = dy * gamma                                        # (n_k, C, *L)
        mean_dx_hat = gamma * dbeta.reshape(shape) / max(N, 1)     # (1, C, 1...)  mean_B over N
        mean_dx_hat_x_hat = gamma * dgamma.reshape(shape) / max(N, 1)            # (1, C, 1...)
        dx = standardize_backward_from_means(dx_hat, x_hat, rstd, mean_dx_hat, mean_dx_hat_x_hat)
        return dx.astype(in_dtype, copy=False)                     # (n_k, C, *L)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, process_group={self.process_group!r}"
