"""SyncBatchNorm: BatchNorm whose statistics are taken over the whole batch, split across workers."""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import as_array
from ..i18n import N_, translator
from ..norms.base import channel_shape
from ..norms.batchnorm import _BatchNorm
from ..norms.standardization import mean_over, standardize, standardize_backward_from_means
from .groups import gather_by_all_reduce

_ = translator("cli")

PROTOCOLS = ("allreduce", "gather")  # normcore's two all-reduces, torch's one all_gather
DTYPES = ("float16", "float32", "float64")  # an input's dtype code is 1 + its index here, 0 otherwise
SHAPE_AXES = 5                              # the input's shape is described up to 5 axes (5-D input)
AGREEMENT = N_("agreement: [num_features, protocol, dtype, ndim, shape] of every worker")  # its name


def describe(layer: "SyncBatchNorm", x: Any) -> np.ndarray:
    """What this worker is about to exchange, as the fixed-length row every worker sends
    before any data moves::

        [num_features, protocol, dtype, ndim, shape[0], ..., shape[4]]      4 + SHAPE_AXES values

    protocol: its index in PROTOCOLS; dtype: 1 + its index in DTYPES, 0 for any other dtype;
    ndim: -1 when x is no array of numbers; the shape padded with 0 (cut after 5 axes)."""
    try:
        a = as_array(x, "SyncBatchNorm")
    except TypeError:
        a = None
    ndim = -1 if a is None else a.ndim
    dtype = 1 + DTYPES.index(a.dtype.name) if a is not None and a.dtype.name in DTYPES else 0
    shape = (list(a.shape) if a is not None else [])[:SHAPE_AXES]
    shape += [0] * (SHAPE_AXES - len(shape))
    return np.array([layer.num_features, PROTOCOLS.index(layer.protocol), dtype, ndim, *shape], dtype=np.float64)


def disagreement(rows: np.ndarray) -> str | None:
    """The error every worker raises when the workers' rows (``describe``, one per worker, in
    rank order) disagree, or None when they agree: the same layer (num_features, protocol) on
    every worker, and inputs of one dtype and one shape but for the batch axis 0 (the shards of
    one batch). Workers that agree run the same input checks on inputs alike, so an input that
    is wrong on every worker raises BatchNorm's own error on every worker."""
    rows = rows.astype(np.int64)                                        # (K, 4 + SHAPE_AXES)
    C, protocol, dtype, ndim, shape = rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 5:]
    same = lambda column: bool(np.all(column == column[0]))             # noqa: E731
    problems = [problem for problem, agreed in [
        (N_("the layers' num_features"), same(C)),
        (N_("the protocol"), same(protocol)),
        (N_("the input's dtype"), same(dtype)),
        (N_("the input's number of dimensions"), same(ndim)),
        (N_("the input's shape beyond the batch axis"), not same(ndim) or same(shape)),
    ] if not agreed]
    if not problems:
        return None
    lines = [_("SyncBatchNorm: before sending any data the {k} workers compared what they are about to "
               "exchange, and they disagree on {what}. Every worker needs the same layer and an input "
               "of the same dtype and shape but for the batch axis 0 (the shards of one batch). No data "
               "was sent, and every worker raises this error.").format(
                   k=len(rows), what=_(", ").join(_(p) for p in problems))]
    lines += [_("  worker {k}: SyncBatchNorm({c}, protocol={protocol!r}), input {input}").format(
        k=k, c=row[0], protocol=PROTOCOLS[row[1]], input=_described_input(row)) for k, row in enumerate(rows)]
    return "\n".join(lines)


def _described_input(row: np.ndarray) -> str:
    """A worker's input as its row describes it: 'float64 of shape (2, 3)'."""
    dtype, ndim = row[2], row[3]
    if ndim < 0:
        return _("that is not an array of numbers")
    shape = ", ".join(map(str, row[4:4 + min(ndim, SHAPE_AXES)])) + (", ..." if ndim > SHAPE_AXES else "")
    shape = f"({shape},)" if ndim == 1 else f"({shape})"
    if not dtype:
        return _("of shape {shape}, of a dtype other than float16, float32 and float64").format(shape=shape)
    return _("{dtype} of shape {shape}").format(dtype=DTYPES[dtype - 1], shape=shape)


class SyncBatchNorm(_BatchNorm):
    r"""BatchNorm over a batch split across the workers of ``process_group``; each worker holds
    one replica of the layer and calls it on its own shard x_k (n_k values per channel, n_k may
    be 0), and every worker gets what BatchNorm gives on the concatenated batch (N = sum_k n_k).
    Two protocols for the forward's statistics, the same backward.

    Before any data moves, in every training forward, the workers agree on what they are about
    to exchange: each sends its ``describe`` row, [num_features, protocol, dtype, ndim, shape]
    (9 values), in one all_reduce that hands every worker all K rows (``gather_by_all_reduce``,
    K x 9 values), and every worker checks the same rows. If they disagree (layers of different
    num_features or protocol, inputs of different dtypes, or shapes that are not the shards of
    one batch, the same but for axis 0), every worker raises the same ValueError naming each
    worker's layer and input, and no data has been sent: a worker never raises its own input
    error while the others wait for it. Workers that agree then check their inputs as BatchNorm
    does, alike, so an input wrong in the same way on every worker raises on every worker.

    ``protocol="allreduce"`` (the default): two all-reduces, sums only::

        forward, round 1:   [N, S]   = all_reduce([n_k, sum_B(x_k)])            1 + C values
                            mean     = S / N                                    (1, C, 1...)
        forward, round 2:   M2       = all_reduce(sum_B((x_k - mean)**2))       C values
                            var      = M2 / N                                   biased

    ``protocol="gather"`` (torch.nn.SyncBatchNorm's): one all_gather of each worker's own
    statistics, merged as the variance *within* the shards plus the spread *between* their means::

        forward:            rows     = all_gather([mean_k, invstd_k, n_k])      K x (2C + 1) values
                            (invstd_k = 1 / sqrt(var_k + eps), as torch sends it; the rows
                             with n_k = 0 are left out)
                            var_k    = 1 / invstd_k**2 - eps                    each worker's own
                            mean     = sum_k n_k * mean_k / N
                            var      = sum_k n_k * (var_k + (mean_k - mean)**2) / N     within + between

    Both then, on every worker::

                            x_hat, y = standardize(x_k, mean, var, eps), x_hat * gamma + beta
                            running_var gets var * N / (N - 1): the GLOBAL count (torch: count_all)

        backward:           [dbeta, dgamma] = all_reduce([sum_B(dy_k), sum_B(dy_k * x_hat_k)])  2C values
                            dx_k = rstd * (dx_hat_k - gamma * dbeta / N - x_hat_k * gamma * dgamma / N)

    torch's backward all-reduces [sum dy_k, sum dy_k * (x_k - mean)], the same sums up to the
    factor rstd per channel. So a training step costs, after the agreement (9K values sent and
    received per worker), three all-reduces with the default protocol (4C + 1 values sent and
    received per worker) and two collectives with "gather", one all_gather and one all_reduce
    (4C + 1 values sent, (2C + 1) K + 2C received per worker).

    Why the default takes two rounds: all_reduce can only SUM, so it needs the global mean
    before it can sum squared deviations from it; the one-round sums [n, sum x, sum x**2] give
    the variance as E[x**2] - E[x]**2, which cancels catastrophically when the mean is large
    against the spread (a shard at 1e4 with a spread of 1 loses 8 of float64's 16 digits).
    The gather protocol needs one round because each worker centres its own shard first (var_k)
    and the between term needs only the means; its price is a message that grows with the
    number of workers, and each mean_k rounded to the input's spacing enters the between term
    once (at a mean of 1e8 with a spread of 1 the variance keeps 9 digits, against 15 for the
    two rounds). Both equal BatchNorm on the concatenated batch to 1e-12 on ordinary inputs.

    Gradients: ``backward`` returns dL/dx_k for this worker's shard and adds to gamma.grad and
    beta.grad this worker's *local* contributions, sum_B(dy_k * x_hat_k) and sum_B(dy_k); their
    sum over the workers is BatchNorm's dgamma and dbeta on the concatenated batch (data-parallel
    training then all-reduces the parameters' gradients, as it does for every other layer).
    dy_k is the gradient of the loss summed over the workers: scale it as the loss is scaled.

    Evaluation: the running statistics, no communication, exactly BatchNorm's. As in PyTorch,
    evaluation with ``track_running_stats=False`` uses this worker's own shard's statistics
    (no communication either). Every worker must call forward (and backward) together, in
    training mode; the agreement checks the layers and inputs, and an error that depends on the
    global batch (N = 1 value per channel) is raised by every worker too. The backward is not
    checked that way: an upstream gradient of the wrong shape raises on its worker alone. Variances
    beyond float64's range (|x| ~1e154) overflow to inf here, as in PyTorch (BatchNorm rescales
    them; see ``moments``).
    """

    _dims = (2, 3, 4, 5)

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group: Any = None,
                 dtype: DTypeLike = np.float64, *, protocol: str = "allreduce") -> None:
        if not isinstance(protocol, str) or protocol not in PROTOCOLS:
            error = ValueError if isinstance(protocol, str) else TypeError
            raise error(_("SyncBatchNorm: protocol must be 'allreduce' (two all-reduces in the "
                          "forward, the default) or 'gather' (torch's: one all_gather), got "
                          "{protocol!r}").format(protocol=protocol))
        collectives = ("all_reduce", "all_gather") if protocol == "gather" else ("all_reduce",)
        for needed in collectives:
            if process_group is None or not callable(getattr(process_group, needed, None)):
                raise TypeError(_("SyncBatchNorm(protocol={protocol!r}) needs a process_group with "
                                  "{needed}(vector), rank and world_size (an InProcessGroup worker or "
                                  "a TorchGroup), got {group!r}").format(
                                      protocol=protocol, needed=needed, group=process_group))
        super().__init__(num_features, eps, momentum, affine, track_running_stats, dtype)
        self.process_group, self.protocol = process_group, protocol
        self._synced = False  # whether the last forward communicated (training) or not (evaluation)

    def forward(self, x: ArrayLike) -> np.ndarray:
        if not self.training:                                      # evaluation: BatchNorm's, no messages
            y = super().forward(x)
            self._synced = False
            return y
        self._agree(x)                                             # before any data moves
        x, in_dtype = self._input(x)                               # (n_k, C, *L)  float16 -> float32
        B = (0,) + tuple(range(2, x.ndim))                         # every axis but the channels
        shape = channel_shape(self.num_features, x.ndim)           # (1, C, 1...)
        statistics = self._gathered_statistics if self.protocol == "gather" else self._reduced_statistics
        mean, var, N = statistics(x, B, shape)                     # (1, C, 1...) x2, int: the whole batch's
        x_hat, rstd = standardize(x, mean, var, self.eps)          # (n_k, C, *L), (1, C, 1...)
        gamma, beta = self._gamma_beta(x.dtype, shape)             # (1, C, 1...)
        y = x_hat * gamma + beta                                   # (n_k, C, *L)
        if self.track_running_stats:
            self._update_running_stats(mean, var, N)               # unbiased with N / (N - 1)
        self._cache, self._synced = (x_hat, rstd, N, in_dtype), True
        return y.astype(in_dtype, copy=False)

    def _agree(self, x: Any) -> None:
        """Every worker sends its ``describe`` row (4 + SHAPE_AXES values) in one all_reduce and
        checks the same K rows: if they do not fit together (``disagreement``), every worker
        raises the same ValueError, before any data has moved and before its own input checks,
        so no worker is left waiting in a collective the others never join."""
        rows = gather_by_all_reduce(self.process_group, describe(self, x), name=AGREEMENT)
        problem = disagreement(rows)
        if problem is not None:
            raise ValueError(problem)

    def _reduced_statistics(self, x: np.ndarray, B: tuple[int, ...],
                            shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        """The whole batch's mean and biased variance, of shape ``shape``, and N, from two
        all-reduces of sums (normcore's protocol)."""
        n_k = x.size // self.num_features                          # this worker's values per channel
        sent = np.concatenate([[n_k], x.sum(axis=B, dtype=np.float64)])           # (1 + C,)
        got = self.process_group.all_reduce(sent, name=N_("forward 1/2: [n_k, sum x_k] per channel"))
        N, mean = int(got[0]), got[1:].reshape(shape) / max(got[0], 1)          # (1, C, 1...)
        self._check_batch(x, N)                                    # N = 1: every worker raises
        sent = np.square(x - mean, dtype=np.float64).sum(axis=B)                 # (C,)
        got = self.process_group.all_reduce(sent, name=N_("forward 2/2: sum (x_k - mean)**2 per channel"))
        return mean, got.reshape(shape) / max(N, 1), N             # (1, C, 1...) biased

    def _gathered_statistics(self, x: np.ndarray, B: tuple[int, ...],
                             shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, int]:
        """The whole batch's mean and biased variance, of shape ``shape``, and N, from one
        all_gather of every worker's [mean_k, invstd_k, n_k], merged as within + between
        (torch's protocol)."""
        C = self.num_features
        n_k = x.size // C                                          # this worker's values per channel
        mean_k = mean_over(x, B)                                   # (1, C, 1...)  0 on an empty shard
        var_k = mean_over(np.square(x - mean_k, dtype=np.float64), B)           # (1, C, 1...) biased
        invstd_k = 1.0 / np.sqrt(var_k + self.eps)                 # (1, C, 1...)
        sent = np.concatenate([mean_k.ravel(), invstd_k.ravel(), [n_k]])          # (2C + 1,)
        rows = self.process_group.all_gather(sent, name=N_("forward: [mean_k, invstd_k, n_k] per channel"))
        rows = rows[rows[:, -1] > 0]                               # (K', 2C + 1) the workers with rows
        means, invstds, n = rows[:, :C], rows[:, C:2 * C], rows[:, 2 * C:]      # (K', C), (K', C), (K', 1)
        N = int(n.sum())
        self._check_batch(x, N)                                    # N = 1: every worker raises
        variances = 1.0 / invstds ** 2 - self.eps                  # (K', C) each worker's var_k
        mean = (n * means).sum(axis=0) / max(N, 1)                 # (C,)
        var = (n * (variances + (means - mean) ** 2)).sum(axis=0) / max(N, 1)   # (C,) within + between
        return mean.reshape(shape), var.reshape(shape), N          # (1, C, 1...)

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
                                            name=N_("backward: [sum dy_k, sum dy_k * x_hat_k] per channel"))
        dbeta, dgamma = got[:self.num_features], got[self.num_features:]        # (C,) over all workers
        self._add_grads(dgamma_k, dbeta_k)                         # local shares (see the docstring)
        gamma, _ = self._gamma_beta(x_hat.dtype, shape)            # (1, C, 1...)
        dx_hat = dy * gamma                                        # (n_k, C, *L)
        mean_dx_hat = gamma * dbeta.reshape(shape) / max(N, 1)     # (1, C, 1...)  mean_B over N
        mean_dx_hat_x_hat = gamma * dgamma.reshape(shape) / max(N, 1)            # (1, C, 1...)
        dx = standardize_backward_from_means(dx_hat, x_hat, rstd, mean_dx_hat, mean_dx_hat_x_hat)
        return dx.astype(in_dtype, copy=False)                     # (n_k, C, *L)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, process_group={self.process_group!r}, protocol={self.protocol!r}"
