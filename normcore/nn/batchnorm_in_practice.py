r"""BatchNorm as it is used after training: folded into the Linear before it, its running
statistics recalibrated, and frozen for fine-tuning; and the affine of any norm folded into
the Linear after it.

``fold_batchnorm(linear, bn)``      a new Linear equal to linear -> bn in evaluation mode
``fold_norm_affine(norm, linear)``  a new Linear that takes in the norm's gamma and beta
``recalibrate_batchnorm(model, batches)``   running statistics = those of the given data
``freeze_batchnorm(model)``         BatchNorms stay in evaluation mode while the model trains
"""

from collections.abc import Iterable
from typing import Any

import numpy as np

from .._array import flag
from ..distributed.groups import gather_by_all_reduce
from ..distributed.syncbatchnorm import SyncBatchNorm
from ..i18n import N_, translator
from ..module import Module, Parameter
from ..norms.batchnorm import BatchNorm1d, _BatchNorm
from ..norms.dyt import DyT
from ..norms.groupnorm import GroupNorm
from ..norms.layernorm import LayerNorm
from ..norms.rmsnorm import RMSNorm
from ..norms.standardization import moments
from .linear import Linear

_ = translator("cli")


def fold_batchnorm(linear: Linear, bn: BatchNorm1d) -> Linear:
    r"""A new ``Linear`` equal to ``linear`` followed by ``bn`` in evaluation mode.

    Derivation. In evaluation BatchNorm is a fixed affine map of each feature j: with
    ``s = gamma / sqrt(running_var + eps)`` (eps inside the square root, as in the layer)::

        bn(z)_j = (z_j - running_mean_j) * s_j + beta_j
        z       = x W^T + b                                  (the Linear)
        bn(z)_j = sum_i x_i (s_j W_ji) + s_j (b_j - running_mean_j) + beta_j

    so the pair is one Linear with

        W' = s[:, None] * W                                  (out, in)   row j scaled by s_j
        b' = s * (b - running_mean) + beta                   (out,)

    (b = 0 when ``linear`` has no bias; gamma = 1 and beta = 0 when ``bn`` has none). At
    inference the BatchNorm then costs nothing: one matrix product instead of a matrix product
    and a pass over its output.

    Only BatchNorm folds whole, and only in evaluation. In training it normalises with the
    batch's mean and variance, which change with every batch. LayerNorm and RMSNorm do not fold
    whole: their mean and variance (RMSNorm's mean square) are taken over each sample's own
    features, so the divisor ``sqrt(var(z) + eps)`` differs from sample to sample and depends
    on the input, and no fixed W' and b' reproduce it; that division stays at inference. Their
    gamma and beta, an affine map applied after the statistics, do fold, into the *next*
    Linear: ``fold_norm_affine(norm, linear)``.

    A BatchNorm1d of one feature folds too, as in torch's ``fuse_linear_bn_eval``: after a
    Linear it normalises outputs laid out (N, 1, out), one channel whose L positions are the
    ``out`` features, so its one s, running_mean and beta apply to every feature and broadcast
    in the two lines above. (On outputs (N, out) that pair is no model: BatchNorm1d(1) expects
    one channel and raises, in torch as here.)

    Requirements, checked before anything is computed: ``linear`` a Linear, ``bn`` a
    BatchNorm1d in evaluation mode with running statistics (``track_running_stats=True``) and
    ``bn.num_features`` equal to ``linear.out_features``, or 1. The result always has a bias
    of shape (out,), has ``linear``'s dtype (computed in float64, then cast) and shares no
    array with the inputs, which are not changed.
    """
    _check_foldable(linear, bn)
    scale = _gamma(bn) / np.sqrt(bn.running_var.astype(np.float64) + bn.eps)      # (out,)  s
    weight = linear.weight.data.astype(np.float64)                                 # (out, in)
    bias = np.zeros(linear.out_features) if linear.bias is None else linear.bias.data.astype(np.float64)  # (out,)
    folded = Linear(linear.in_features, linear.out_features, bias=True, dtype=linear.weight.dtype)
    dtype = linear.weight.dtype
    folded.weight = Parameter(scale[:, None] * weight, dtype=dtype)               # (out, in)  W'
    folded.bias = Parameter(scale * (bias - bn.running_mean) + _beta(bn), dtype=dtype)  # (out,)  b'
    return folded


def _gamma(layer: Any) -> np.ndarray | float:
    """gamma in float64, or 1 when the layer (a BatchNorm, or a norm fold_norm_affine takes) has no
    scale."""
    weight = getattr(layer, "weight", None)
    return 1.0 if weight is None else weight.data.astype(np.float64)


def _beta(layer: Any) -> np.ndarray | float:
    """beta in float64, or 0 when the layer has no shift (affine=False, or bias=False)."""
    bias = getattr(layer, "bias", None)
    return 0.0 if bias is None else bias.data.astype(np.float64)


def _check_foldable(linear: Any, bn: Any) -> None:
    who = "fold_batchnorm"
    if not isinstance(linear, Linear):
        raise TypeError(f"{who} expects a Linear as its first argument, got {type(linear).__name__}")
    if isinstance(bn, (LayerNorm, RMSNorm)):
        raise TypeError(f"{who}: {type(bn).__name__} cannot be folded into the Linear before it: its "
                        "statistics are computed per sample at inference too, so it is no fixed affine "
                        "map; its gamma and beta fold into the Linear after it with fold_norm_affine")
    if not isinstance(bn, BatchNorm1d):
        raise TypeError(f"{who} expects a BatchNorm1d as its second argument, got {type(bn).__name__}")
    if bn.training:
        raise ValueError(f"{who}: the BatchNorm1d is in training mode, where it normalises with each "
                         "batch's statistics; call bn.eval() first to fold its running statistics")
    if not bn.track_running_stats:
        raise ValueError(f"{who}: the BatchNorm1d has track_running_stats=False, so it has no running "
                         "statistics to fold (it uses each batch's statistics even in evaluation)")
    if bn.num_features not in (linear.out_features, 1):
        raise ValueError(f"{who}: Linear has out_features={linear.out_features} but the BatchNorm1d has "
                         f"num_features={bn.num_features}; expected them equal, or num_features=1 "
                         "(one channel, applied to every output feature)")


# the norms whose last step is gamma * x_hat + beta per feature, and how to count their features
FOLDABLE_NORMS = (LayerNorm, RMSNorm, DyT, GroupNorm, BatchNorm1d)


def fold_norm_affine(norm: LayerNorm | RMSNorm | DyT | GroupNorm | BatchNorm1d, linear: Linear) -> Linear:
    r"""A new ``Linear`` that takes in ``norm``'s gamma and beta: ``linear(norm(x))`` equals
    ``folded(x_hat)``, x_hat being ``norm`` without its affine.

    Derivation. Each of these norms ends with an affine map of each feature i, applied after
    its statistics, and the Linear that follows reads those features::

        norm(x)_i   = gamma_i * x_hat_i + beta_i
        linear(y)_j = sum_i W_ji y_i + b_j
        linear(norm(x))_j = sum_i (W_ji gamma_i) x_hat_i + (sum_i W_ji beta_i + b_j)

    so the pair is the affine-free norm followed by one Linear with

        W' = W * gamma[None, :]                              (out, in)   column i scaled by gamma_i
        b' = W @ beta + b                                    (out,)      the original W, not W'

    (b = 0 when ``linear`` has no bias, beta = 0 when ``norm`` has none). x_hat is what the
    norm computes before its affine: LayerNorm (x - mean) / sqrt(var + eps) and RMSNorm
    x / sqrt(mean(x**2) + eps) over the last axis, DyT tanh(alpha * x), GroupNorm and
    BatchNorm1d over the channels of an (N, C) input (BatchNorm1d with the batch's statistics in
    training, the running ones in evaluation; the fold holds in both modes).

    What does not fold: the statistics. LayerNorm's and RMSNorm's divisor is computed from each
    sample's own features, so it stays at inference; the fold removes one multiply and one add
    per feature and the 2 * in_features parameters gamma and beta, not the norm. (LayerNorm's
    centring can be absorbed too, upstream: when every weight that writes into the norm's input
    (in a Pre-LN Transformer, everything added to the residual stream) writes a mean-free
    vector, with W - W.mean(axis=0) and b - b.mean(), the input is mean-free and the centring
    does nothing.)
    GroupNorm and BatchNorm1d fold only when their input is (N, C): with (N, C, L) the Linear
    reads L, not the channels gamma scales.

    What the caller gets: the new Linear only; ``norm`` and ``linear`` are not changed and share
    no array with it. The norm to put before it is the same norm without its affine::

        LayerNorm(n, eps=norm.eps, bias=..., elementwise_affine=False)
        RMSNorm(n, eps=norm.eps, elementwise_affine=False)
        DyT(n, alpha_init=float(norm.alpha.data[0]), elementwise_affine=False)   # alpha stays
        GroupNorm(G, C, eps=norm.eps, affine=False)
        BatchNorm1d(C, eps=norm.eps, momentum=norm.momentum, affine=False), its running
            statistics loaded from norm.state_dict() (all but weight and bias), same mode

    The result has a bias when ``linear`` has one or ``norm`` has a beta (a bias-free RMSNorm
    into a bias-free Linear stays bias-free), and the dtype of both (computed in float64, then
    cast once).

    Requirements, checked before anything is computed (a refusal changes nothing): ``norm`` one
    of LayerNorm, RMSNorm, DyT, GroupNorm, BatchNorm1d (either tier) with an affine (without one
    there is nothing to fold), a LayerNorm, RMSNorm or DyT over one axis (a Linear reads one
    axis), as many features as ``linear.in_features``, and gamma and beta of ``linear``'s dtype.
    """
    _check_norm_foldable(norm, linear)
    weight = linear.weight.data.astype(np.float64)                                 # (out, in)  W
    bias = 0.0 if linear.bias is None else linear.bias.data.astype(np.float64)     # (out,)     b
    gamma, beta = _gamma(norm), _beta(norm)                                        # (in,) or 1, 0
    dtype = linear.weight.dtype
    has_bias = linear.bias is not None or norm.bias is not None
    folded = Linear(linear.in_features, linear.out_features, bias=has_bias, dtype=dtype)
    folded.weight = Parameter(weight * gamma, dtype=dtype)                        # (out, in)  W'
    if has_bias:
        folded.bias = Parameter(weight @ np.broadcast_to(beta, linear.in_features) + bias,
                                dtype=dtype)                                       # (out,)     b'
    return folded


def _features(norm: Any) -> int:
    """How many features the norm's gamma scales: the length of its one normalised axis, or
    its channels."""
    if isinstance(norm, GroupNorm):
        return norm.num_channels
    if isinstance(norm, BatchNorm1d):
        return norm.num_features
    return norm.normalized_shape[0]


def _check_norm_foldable(norm: Any, linear: Any) -> None:
    who = "fold_norm_affine"
    if not isinstance(norm, FOLDABLE_NORMS):
        names = ", ".join(c.__name__ for c in FOLDABLE_NORMS)
        raise TypeError(f"{who} expects as its first argument a norm whose affine gamma * x_hat + beta "
                        f"acts on the Linear's input features ({names}), got {type(norm).__name__}")
    if not isinstance(linear, Linear):
        raise TypeError(f"{who} expects a Linear as its second argument, got {type(linear).__name__}")
    name = type(norm).__name__
    if norm.weight is None and norm.bias is None:
        raise ValueError(f"{who}: the {name} has no affine (no gamma, no beta): there is nothing to fold")
    if isinstance(norm, (LayerNorm, RMSNorm, DyT)) and len(norm.normalized_shape) != 1:
        raise ValueError(f"{who}: the {name} has normalized_shape={norm.normalized_shape}, over "
                         f"{len(norm.normalized_shape)} axes; a Linear reads one axis, so it must be "
                         "(in_features,)")
    if _features(norm) != linear.in_features:
        raise ValueError(f"{who}: the {name} has {_features(norm)} features but the Linear has "
                         f"in_features={linear.in_features}; they must be equal")
    for p in (norm.weight, norm.bias):
        if p is not None and p.dtype != linear.weight.dtype:
            raise TypeError(f"{who}: the {name}'s gamma and beta are {p.dtype} but the Linear's weight is "
                            f"{linear.weight.dtype}; they must have the same dtype")


def batchnorms(model: Module) -> list[_BatchNorm]:
    """Every BatchNorm (1d, 2d, reference or fast tier) in ``model``, itself included, in
    ``named_modules`` order."""
    return [m for _, m in model.named_modules() if isinstance(m, _BatchNorm)]


class _PooledMoments:
    """Count, mean and M2 = sum((x - mean)**2) per channel over every batch added, merged with
    Chan's parallel formula (no E[x**2] - E[x]**2 cancellation), in float64::

        n = n_a + n_b,   d = mean_b - mean_a
        mean = mean_a + d * n_b / n,   M2 = M2_a + M2_b + d**2 * n_a * n_b / n
    """

    def __init__(self, channels: int) -> None:
        self.n, self.mean, self.m2 = 0, np.zeros(channels), np.zeros(channels)

    def add(self, x: np.ndarray) -> None:
        """Merge in the batch ``x`` (N, C, *L)."""
        x = np.asarray(x, dtype=np.float64)                       # (N, C, *L)
        n_b = x.size // x.shape[1]                                # values per channel
        if n_b == 0:
            return
        B = (0,) + tuple(range(2, x.ndim))                        # every axis but the channels
        mean_b, var_b, scale = moments(x, B)                      # (1, C, 1...)  biased, in units of scale**2
        self.merge(n_b, mean_b.ravel(), (var_b * scale ** 2).ravel() * n_b)   # (C,), (C,)

    def merge(self, n_b: int, mean_b: np.ndarray, m2_b: np.ndarray) -> None:
        """Merge in another part's count, mean (C,) and M2 (C,) with Chan's formula."""
        if n_b == 0:
            return
        n = self.n + n_b
        d = mean_b - self.mean                                    # (C,)
        self.mean = self.mean + d * n_b / n                       # (C,)
        self.m2 = self.m2 + m2_b + d ** 2 * self.n * n_b / n      # (C,)
        self.n = n

    def over_workers(self, group: Any) -> "_PooledMoments":
        """The moments of every worker of ``group`` together: each worker's [n_k, mean_k, M2_k] (one
        all_reduce of K (1 + 2C) values), merged in rank order, the same bits on every worker."""
        C = self.mean.size
        rows = gather_by_all_reduce(group, np.concatenate([[self.n], self.mean, self.m2]),
                                    name=N_("recalibration: [n_k, mean_k, M2_k] per channel of every worker"))
        pooled = _PooledMoments(C)
        for row in rows:                                          # (1 + 2C,) worker k's
            pooled.merge(int(row[0]), row[1:1 + C], row[1 + C:])
        return pooled


def recalibrate_batchnorm(model: Module, batches: Iterable[Any]) -> Module:
    r"""Recompute the running statistics of every BatchNorm in ``model`` from ``batches``.

    Each BatchNorm's running_mean and running_var become exactly the mean and the *unbiased*
    variance (factor N / (N - 1), N the total count) of everything it receives over all the
    batches together: the statistics of the concatenated batches, every sample weighing the
    same, whatever the batch sizes. This is the "calibration" of a trained network (one pass
    over the training set after training), and it closes the train/eval gap that the running
    averages' momentum leaves: with momentum 0.1 they mix the last ~10 batches, seen by
    weights that have moved since.

    What each BatchNorm receives: the batches go through ``model`` in evaluation mode, except
    that every BatchNorm normalises with the current batch's statistics, as in training (so
    that the layers after it see what they saw in training, and its running statistics are not
    touched during the pass); so every non-empty batch must give each BatchNorm more than one
    value per channel, as in training. Dropout is off. The statistics are accumulated per channel with
    Chan's parallel merge in float64 and written when the pass is over.

    PyTorch's ``momentum=None`` (the cumulative average, and ``torch.optim.swa_utils.update_bn``)
    weighs every *batch* the same: its running_mean is the mean of the batch means and its
    running_var the mean of the batch's unbiased variances. With equal batch sizes the means
    agree, but that variance leaves out the spread of the batch means around the overall mean,
    which the variance of the concatenation includes.

    SyncBatchNorm replicas (data-parallel training, one replica per worker) are recalibrated
    through their process group: every worker calls ``recalibrate_batchnorm`` on its replica with
    its own batches, together, as many batches on every worker (an empty batch of shape (0, C)
    is allowed); batch i of the pass is the workers' i-th batches together, and each
    SyncBatchNorm normalises with that whole batch's statistics, as in training. The workers'
    moments are then merged (one all_reduce of K (1 + 2C) values per SyncBatchNorm, Chan's merge
    in rank order), so every replica gets the same running statistics: those of all the
    workers' batches concatenated. Before the pass the workers compare how many batches they
    hold; if the counts differ, every worker raises the same ValueError.

    Every other state stays as it was: parameters, gradients, other buffers, each module's
    training flag and forward cache. num_batches_tracked becomes the number of batches, the
    count PyTorch's ``update_bn`` leaves. A BatchNorm with ``track_running_stats=False`` has
    no running statistics and is left alone. Errors (``batches`` not an iterable of batches, no
    batches, no BatchNorm with running statistics, a batch the model rejects, a BatchNorm that
    received fewer than two values per channel) are raised before anything is written, and a
    call that raises changes nothing. Returns ``model``.
    """
    who = "recalibrate_batchnorm"
    if not isinstance(model, Module):
        raise TypeError(_("{who} expects a Module, got {got}").format(who=who, got=type(model).__name__))
    batches = _batch_list(batches, who)
    tracked = [bn for bn in batchnorms(model) if bn.track_running_stats]
    if not tracked:
        raise ValueError(_("{who}: {model} has no BatchNorm with running statistics").format(
            who=who, model=type(model).__name__))
    _agree_on_batch_count(model, len(batches), who)
    if not batches:
        raise ValueError(_("{who} needs at least one batch, got none").format(who=who))
    pooled = _calibration_pass(model, tracked, batches)
    pooled = [p.over_workers(bn.process_group) if isinstance(bn, SyncBatchNorm) else p
              for bn, p in zip(tracked, pooled)]                  # every worker's moments merged
    for bn, p in zip(tracked, pooled):
        if p.n < 2:
            raise ValueError(_("{who}: a {layer} received {n} value(s) per channel over all batches; "
                               "the unbiased variance needs at least 2").format(
                                   who=who, layer=type(bn).__name__, n=p.n))
    for bn, p in zip(tracked, pooled):  # everything is computed: now write it
        bn.running_mean[...] = p.mean
        bn.running_var[...] = p.m2 / (p.n - 1)
        bn.num_batches_tracked[...] = len(batches)
    return model


def _batch_list(batches: Any, who: str) -> list[Any]:
    """``batches`` as a list, or a TypeError saying what is expected (an array is one batch, not
    an iterable of them)."""
    if isinstance(batches, (np.ndarray, str, bytes)) or not isinstance(batches, Iterable):
        raise TypeError(_("{who} expects an iterable of batches (a list of arrays, a generator, a "
                          "data loader), got {got}; one batch x is passed as [x]").format(
                              who=who, got=type(batches).__name__))
    return list(batches)


def _agree_on_batch_count(model: Module, count: int, who: str) -> None:
    """With SyncBatchNorm replicas, every worker must hold as many batches (each batch is one
    synchronised step): the workers of each process group compare their counts in one
    all_reduce, and if they differ every worker raises the same ValueError."""
    groups = list({id(bn.process_group): bn.process_group for bn in batchnorms(model)
                   if isinstance(bn, SyncBatchNorm)}.values())
    for group in groups:
        counts = gather_by_all_reduce(group, np.array([float(count)]),
                                      name=N_("recalibration: the number of batches of every worker"))
        if np.any(counts != counts[0]):
            raise ValueError(_("{who}: the workers hold different numbers of batches ({counts}, worker: "
                               "batches); each batch is one synchronised step of the SyncBatchNorms, so "
                               "every worker needs as many (an empty batch, of shape (0, C), is "
                               "allowed)").format(who=who, counts={k: int(n) for k, n in enumerate(counts[:, 0])}))


def _calibration_pass(model: Module, tracked: list[_BatchNorm], batches: list[Any]) -> list[_PooledMoments]:
    """Run every batch through ``model`` (evaluation mode, each BatchNorm normalising with the
    batch's statistics; a SyncBatchNorm with those of the whole batch across its workers) and
    return the pooled moments of each tracked BatchNorm's input (this worker's share). Every
    module's attributes (training flag, cache, ...) are restored afterwards, even on an error."""
    saved = [(m, dict(m.__dict__)) for _, m in model.named_modules()]
    pooled = [_PooledMoments(bn.num_features) for bn in tracked]
    try:
        model.eval()
        for bn, p in zip(tracked, pooled):
            # not training and not tracking: the layer uses the batch's statistics and updates nothing
            bn.track_running_stats = False
            bn.forward = _recording(bn.forward, p)  # type: ignore[method-assign]  # for this pass only
        for bn in batchnorms(model):
            if isinstance(bn, SyncBatchNorm):  # training, not tracking: the whole batch's statistics
                bn.training = True
        for i, batch in enumerate(batches):
            try:
                model(batch)
            except (TypeError, ValueError) as e:
                raise type(e)(_("recalibrate_batchnorm: batch {i} was rejected: {error}").format(
                    i=i, error=e)) from e
    finally:
        for m, attributes in saved:
            m.__dict__.clear()
            m.__dict__.update(attributes)
    return pooled


def _recording(forward: Any, pooled: _PooledMoments) -> Any:
    """``forward`` that also adds its (validated) input to ``pooled``."""
    def record(x: Any) -> np.ndarray:
        y = forward(x)
        pooled.add(x)
        return y
    return record


def freeze_batchnorm(model: Module, frozen: bool = True) -> list[Module]:
    """Freeze every BatchNorm in ``model`` for fine-tuning; returns them.

    A frozen BatchNorm is in evaluation mode and stays there when ``model.train()`` is called:
    it normalises with its running statistics, which no longer move, while the rest of the
    model trains (with batches too small or too different for good batch statistics, as in
    fine-tuning a detector). Its backward is then the evaluation one, dx = dy * gamma / sqrt(
    running_var + eps). gamma and beta still receive gradients; to keep them fixed as well
    (PyTorch's ``torchvision.ops.FrozenBatchNorm2d``), leave them out of the optimizer, e.g.
    ``frozen_ids = {id(p) for bn in frozen for p in bn.parameters()}``.

    ``frozen=False`` unfreezes them: they return to the model's current mode. A BatchNorm with
    ``track_running_stats=False`` has no running statistics to freeze to: an error, before
    anything changes.
    """
    who = "freeze_batchnorm"
    if not isinstance(model, Module):
        raise TypeError(f"{who} expects a Module, got {type(model).__name__}")
    frozen = flag(frozen, "frozen", who)
    layers = batchnorms(model)
    untracked = [name for name, m in model.named_modules() if m in layers and not m.track_running_stats]
    if frozen and untracked:
        raise ValueError(f"{who}: {untracked} have track_running_stats=False: no running statistics to "
                         "freeze to")
    for bn in layers:
        bn.frozen = frozen
        bn.training = False if frozen else model.training
    return list(layers)
