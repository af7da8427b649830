"""The mistakes the PyTorch track names: the NumPy catalog's forward mistakes written in torch,
and the mistakes only a torch.nn.Module can make.

A PyTorch answer writes the forward only, so of the NumPy catalog it can make the forward
mistakes (eps outside the square root, the wrong axes, the momentum flipped, ...): each gets
variants on the torch reference answer ``solutions/torch/NAME.py`` under the key
``torch/NAME``, with the NumPy entry's id, title, symptom and hint; the pieces of the answers
the variants rewrite are ``anchors.py``'s. The mistakes of the
backward (a missing term of dx, dgamma reduced wrongly, gradients assigned) cannot happen:
autograd writes the backward; but a forward that cuts the graph can make one (WeightNorm's norm
detached gives the NumPy answer's dv without its projection, number for number). Then the
torch-only mistakes (``TORCH_ONLY``): torch.var's Bessel correction, a missing keepdim, a
hard-coded dim, a tensor not registered, running statistics updated with autograd history,
``.data`` in the forward, an in-place edit of the input, a float16 RMSNorm without the float32
upcast, WeightNorm's g of shape (out,).

In the torch track ``torch-var-unbiased`` takes the place of the NumPy catalog's
``var-unbiased-in-normalization``: the numbers are the same, and torch.var's default is its
usual cause.

Nothing here imports torch. ``mistakes_for("torch/layernorm")`` lists the entries of one
exercise; importing this module also registers the torch-only entries in ``catalog.BY_ID``,
so that a report can name them (the catalog package can do that with one import line).
"""

from dataclasses import dataclass, replace

from ...i18n import N_
from ..catalog import BY_ID, Anchor, Mistake
from ..catalog.base import torch_solution, where_taught
from ..catalog.dropout import KEEP
from ..catalog.dyt import ALPHA, ALPHA_ONE
from ..catalog.fold_norm_affine import AFFINE_BIAS
from ..catalog.norms import MOMENTUM
from ..catalog.softmax import CLIP, LOG_EPS
from ..constants import WithConstant
from .anchors import (X_HAT, X_HAT_LINE, DIMS, MEAN, VAR, G_MEAN, G_VAR, SCALE, WEIGHT, BIAS,
                      BN_RUNNING_MEAN, BN_RUNNING_VAR, BN_UNBIASED, BN_BATCH_STATS, BN_UPDATE,
                      BN_EVAL_VAR, BN_NO_GRAD, BN_BUFFERS, BN_Y, BN_M, BN_MOMENTUM, BN_AFFINE,
                      RMS_UPCAST, RMS_EPS, RMS_MS, RMS_RRMS, GN_GROUP, GN_UNGROUP, DROP_EVAL,
                      DROP_EVAL_RETURN, DROP_KEEP, DROP_SCALE, DROP_MASK, SM_DIM, SM_SHIFT,
                      SM_MAX, SM_SUM, LSM_LOGP, LSM_SUM, CE_SHIFT, CE_LOGP, CE_LOSS, LOSS_SIGN,
                      LOSS_MEAN, DYT_ALPHA, DYT_TANH, DYT_U, DYT_ALPHA_AT, ATT_SPLIT, ATT_MERGE,
                      ATT_SCORES, ATT_FUTURE, ATT_MASK, ATT_SHIFT, ATT_SOFTMAX, ATT_WQ, QK_DIMS,
                      QK_QNORM, QK_KNORM, QK_SCORES, QK_GAMMA_Q, QK_RETURN, QK_RRMS,
                      BLOCK_POSITION, BLOCK_Y_PRE, BLOCK_Y_REORDERED, BLOCK_PARAMS, BIASED,
                      MLP_SHIFT, MLP_LOSS, WN_G, WN_G_SHAPE, WN_NORM_DIM, WN_V_SQUARED, WN_SQRT,
                      WN_G_TIMES, FOLD_SCALE, FOLD_WEIGHT, FOLD_BIAS, AFFINE_WEIGHT, SYNC_COUNT,
                      SYNC_REDUCE_SUMS, SYNC_MEAN, SYNC_SQDEV, SYNC_REDUCE_SQDEV, SYNC_VAR,
                      SYNC_UNBIASED, SYNC_NO_GRAD, SYNC_LOCAL_MEAN, CAP_Y, CAP_X, Z_LSE, Z_TERM,
                      STD_OF)

TRACK = "torch/"  # the prefix of the torch track's keys: torch/layernorm


@dataclass(frozen=True)
class TorchMistake(Mistake):
    """A mistake only the PyTorch track makes; ``learn`` says where to read about it."""

    learn: str = ""

    @property
    def taught_in(self):
        return where_taught(self.learn)


def _plain(parameter, grad=False):
    """``nn.Parameter(torch.ones(n))`` written as the plain tensor ``torch.ones(n)``, or with
    ``grad`` as ``torch.ones(n, requires_grad=True)`` (it gets gradients, and is still not
    registered)."""
    tensor = parameter.removeprefix("nn.Parameter(")[:-1]
    return tensor[:-1] + ", requires_grad=True)" if grad else tensor


MEAN_VAR_NORMS = ("layernorm", "batchnorm", "groupnorm")
TRAILING = ("layernorm", "rmsnorm")
SOFTMAXES = ("softmax", "log_softmax")


def _torch(variants):
    """{exercise: variants} -> {torch/exercise: variants}."""
    return {TRACK + name: list(v) for name, v in variants.items()}


def _keepdim_dropped(*anchors):
    return tuple((a, a.replace(", keepdim=True", "")) for a in anchors)


# The NumPy catalog's forward mistakes, written in torch.
FORWARD_VARIANTS = {
    "bn-momentum-flipped": {"batchnorm": [
        ((BN_RUNNING_MEAN, "self.running_mean.mul_(m).add_((1 - m) * mean.flatten())"),
         (BN_RUNNING_VAR, "self.running_var.mul_(m).add_((1 - m) * var.flatten() * n / (n - 1))")),
        # with the decay convention's own default, momentum=0.9 (see the NumPy catalog), and
        # momentum=None's weight 1 / num_batches_tracked put on the old value too
        ((BN_MOMENTUM, "1.0 / self.num_batches_tracked.item() if self.momentum is None else "
                       "(0.9 if self.momentum == 0.1 else self.momentum)"),
         (BN_RUNNING_MEAN, "self.running_mean.mul_(m).add_((1 - m) * mean.flatten())"),
         (BN_RUNNING_VAR, "self.running_var.mul_(m).add_((1 - m) * var.flatten() * n / (n - 1))"))]},
    "bn-running-var-biased": {"batchnorm": [((BN_UNBIASED, "var.flatten()"),)]},
    "stats-over-too-few-axes": {
        **{name: [((DIMS, "dims = (-1,)"),)] for name in TRAILING},
        "groupnorm": [((GN_GROUP, "x.reshape(n, x.shape[1], -1)"),)]},
    "ln-over-batch": {"layernorm": [((DIMS, "dims = (0,)"),)]},
    "gn-strided-groups": {"groupnorm": [(
        (GN_GROUP, "x.reshape(n, -1, self.num_groups, *x.shape[2:]).transpose(1, 2)"
                   ".reshape(n, self.num_groups, -1)"),
        (GN_UNGROUP, "g.reshape(n, self.num_groups, -1, *x.shape[2:]).transpose(1, 2).reshape(x.shape)"))]},
    "bn-eval-batch-stats": {"batchnorm": [
        ((BN_BATCH_STATS, "batch_stats = True"),),
        ((BN_BATCH_STATS, "batch_stats = True"), (BN_UPDATE, "if self.track_running_stats:"))]},
    "bn-train-running-stats": {"batchnorm": [(
        (BN_Y, "mean, var = self.running_mean.view(view), self.running_var.view(view)\n        y = "),)]},
    "bn-eval-squared-var": {"batchnorm": [((BN_EVAL_VAR, "var = self.running_var.view(view) ** 2"),)],
                            "fold_batchnorm": [((FOLD_SCALE, "gamma / torch.sqrt(running_var ** 2 + eps)"),)]},
    "bn-stats-per-position": {"batchnorm": [(
        (MEAN, "x.mean(dim=0, keepdim=True)"),
        (VAR, "x.var(dim=0, unbiased=False, keepdim=True)"),
        (BN_RUNNING_MEAN, "self.running_mean.mul_(1 - m).add_(m * mean.mean(dim=dims).flatten())"),
        (BN_RUNNING_VAR, "self.running_var.mul_(1 - m).add_(m * var.mean(dim=dims).flatten() * n / (n - 1))"))]},
    "rms-subtracts-mean": {"rmsnorm": [(
        (RMS_MS, "h = h - h.mean(dim=dims, keepdim=True)\n        " + RMS_MS),)]},
    "rms-wrong-normaliser": {"rmsnorm": [
        ((RMS_MS, "ms = h.pow(2).sum(dim=dims, keepdim=True)"),),
        ((RMS_MS, "ms = h.pow(2).sum(dim=dims, keepdim=True) / (self.weight.numel() - 1)"),)]},
    "rms-batch-size-normaliser": {"rmsnorm": [((RMS_MS, "ms = h.pow(2).sum(dim=dims, keepdim=True) / h.shape[0]"),)]},
    "rms-over-whole-tensor": {"rmsnorm": [((RMS_MS, "ms = h.pow(2).mean()"),)]},
    "dropout-no-scale": {"dropout": [((DROP_SCALE, "scale = 1.0"),)]},
    "dropout-eval-scaling": {"dropout": [((DROP_EVAL_RETURN, "return x * (1.0 - self.p)"),),
                                         ((DROP_EVAL_RETURN, "return x / (1.0 - self.p)"),)]},
    "dropout-active-in-eval": {"dropout": [((DROP_EVAL, "if self.p == 0.0:"),)]},
    "dropout-p-is-keep": {"dropout": [
        ((DROP_KEEP, "keep = torch.rand_like(x) < self.p"), (DROP_SCALE, "scale = 1.0 / self.p")),
        ((DROP_KEEP, "keep = torch.rand_like(x) < self.p"),),
        ((DROP_KEEP, "keep = torch.rand_like(x) < self.p"),
         (DROP_SCALE, "scale = 0.0 if self.p == 0.0 else 1.0 / self.p"), (DROP_EVAL, "if not self.training:")),
        ((DROP_KEEP, WithConstant("keep = torch.rand_like(x) < {keep}", KEEP)),
         (DROP_SCALE, WithConstant("scale = 1.0 / {keep}", KEEP)), (DROP_EVAL, "if not self.training:")),
        ((DROP_KEEP, WithConstant("keep = torch.rand_like(x) < {keep}", KEEP)),
         (DROP_SCALE, WithConstant("scale = 1.0 / {keep}", KEEP)))]},
    "dropout-scale-1-over-p": {"dropout": [((DROP_SCALE, "scale = 0.0 if self.p == 1.0 else 1.0 / self.p"),),
                                           ((DROP_SCALE, "scale = 1.0 / self.p"),)]},
    "softmax-no-max-shift": {"softmax": [((SM_SHIFT, "z = x"),)], "attention": [((ATT_SHIFT, "z = scores"),)]},
    "attn-mask-after-softmax": {"attention": [((ATT_MASK, "scores"),
                                               (ATT_SOFTMAX, "attn = e / e.sum(dim=-1, keepdim=True) * ~future"))]},
    "attn-mask-zero-fill": {"attention": [((ATT_MASK, "scores.masked_fill(future, 0.0)"),)]},
    "attn-scale-by-d-model": {"attention": [((ATT_SCORES, "scores = q @ k.transpose(-2, -1) / C ** 0.5"),)]},
    "attn-wrong-head-split": {"attention": [
        ((ATT_SPLIT, "t.reshape(B, H, T, C // H)"), (ATT_MERGE, "t.reshape(B, T, H * D)")),
        ((ATT_MERGE, "t.reshape(B, T, H * D)"),)]},
    "attn-softmax-over-queries": {"attention": [(
        (ATT_SHIFT, "z = scores - scores.amax(dim=-2, keepdim=True)"),
        (ATT_SOFTMAX, "attn = e / e.sum(dim=-2, keepdim=True)"))]},
    "attn-mask-flipped": {"attention": [((ATT_FUTURE, ATT_FUTURE.replace("triu(diagonal=1)", "tril(diagonal=-1)")),)]},
    "attn-mask-covers-diagonal": {"attention": [((ATT_FUTURE, ATT_FUTURE.replace("diagonal=1", "diagonal=0")),)]},
    "qk-norm-over-d-model": {"qk_norm": [((QK_DIMS, "self.norm_dims = (1, -1)"),)]},
    "qk-norm-after-scale": {"qk_norm": [((QK_QNORM, "qn = self.rms_norm(q / D ** 0.5, self.gamma_q)"),
                                         (QK_SCORES, "scores = qn @ kn.transpose(-2, -1)"))]},
    "qk-norm-one-side": {"qk_norm": [((QK_KNORM, "kn = k"),), ((QK_QNORM, "qn = q"),)]},
    "softmax-wrong-axis": {name: [((SM_DIM, "self.dim = -1"),), ((SM_DIM, "self.dim = 0"),)]
                           for name in SOFTMAXES},
    "lsm-log-of-softmax": {"log_softmax": [(
        (LSM_LOGP, "torch.log(torch.exp(z) / torch.exp(z).sum(dim=self.dim, keepdim=True))"),)]},
    "ce-summed-not-averaged": {name: [((LOSS_MEAN, "].sum()"),)] for name in ("cross_entropy", "mlp_with_batchnorm")},
    "ce-log-of-softmax": {"cross_entropy": [(
        (CE_LOGP, "torch.log(torch.exp(z) / torch.exp(z).sum(dim=1, keepdim=True))"),)]},
    "ce-mean-over-classes": {name: [((loss, "-(logp * nn.functional.one_hot(targets, logp.shape[1])).mean()"),)]
                             for name, loss in (("cross_entropy", CE_LOSS), ("mlp_with_batchnorm", MLP_LOSS))},
    "block-pre-post-swapped": {"transformer_block": [
        ((BLOCK_POSITION, 'self.position = {"pre": "post", "post": "pre"}.get(position, position)'),)]},
    "block-norm-on-branch-output": {"transformer_block": [((BLOCK_Y_PRE, "x + self.ln(self.ffn(x))"),)]},
    "block-reordered-as-pre-norm": {"transformer_block": [((BLOCK_Y_REORDERED, "x + self.ffn(self.ln(x))"),)]},
    "block-reordered-as-post-norm": {"transformer_block": [((BLOCK_Y_REORDERED, "self.ln(x + self.ffn(x))"),)]},
    **{mistake: {"fold_batchnorm": [((FOLD_BIAS, bias),)]} for mistake, bias in (
        ("fold-bias-not-centred", "s * b + beta"), ("fold-beta-missing", "s * (b - running_mean)"),
        ("fold-bias-dropped", "beta - s * running_mean"), ("fold-bias-not-scaled", "b - running_mean + beta"))},
    "fold-scale-on-columns": {"fold_batchnorm": [((FOLD_WEIGHT, "W * s[None, :]"),)]},
    "fold-eps-missing": {"fold_batchnorm": [((FOLD_SCALE, "gamma / torch.sqrt(running_var)"),)]},
    "fold-affine-gamma-on-rows": {"fold_norm_affine": [((AFFINE_WEIGHT, "gamma[:, None] * W"),)]},
    **{mistake: {"fold_norm_affine": [((AFFINE_BIAS, bias),)]} for mistake, bias in (
        ("fold-affine-beta-not-through-w", "beta + b"), ("fold-affine-beta-through-w-transposed", "W.T @ beta + b"),
        ("fold-affine-bias-dropped", "W @ beta"), ("fold-affine-beta-missing", "b"),
        ("fold-affine-gamma-on-beta", "W * gamma[None, :] @ beta + b"))},
    "sync-bn-variances-averaged": {"sync_batchnorm": [
        ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(dim=0)"),),
        ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(dim=0) / max(n_k, 1)"),
         (SYNC_VAR, "var = got2 / self.group.world_size"))]},
    "sync-bn-unbiased-local-count": {"sync_batchnorm": [((SYNC_UNBIASED, "var * n_k / (n_k - 1)"),)]},
    "sync-bn-one-round-variance": {"sync_batchnorm": [((SYNC_SQDEV, "(x ** 2).sum(dim=0)"),
                                                       (SYNC_VAR, "var = got2 / N - mean ** 2"))]},
    "sync-bn-mean-of-means": {"sync_batchnorm": [((SYNC_COUNT, SYNC_LOCAL_MEAN),
                                                  (SYNC_MEAN, "mean = got[1:] / self.group.world_size"))]},
    "sync-bn-local-statistics": {"sync_batchnorm": [((SYNC_REDUCE_SUMS, "got = sent"),
                                                     (SYNC_REDUCE_SQDEV, "((x - mean) ** 2).sum(dim=0)"))]},
    "wn-norm-wrong-axis": {"weight_norm": [((WN_NORM_DIM, "sum(dim=0, keepdim=True)"),),
                                           ((WN_NORM_DIM, "sum()"),)]},
    # the norm cut out of the graph (detached, or taken of v.data): autograd then treats it as
    # a constant, which is the NumPy answer's dv without its projection term, number for number
    "wn-dv-no-projection": {"weight_norm": [((WN_SQRT, ".sqrt().detach()"),),
                                            ((WN_V_SQUARED, "self.weight_v.data.pow(2)"),)]},
    "dyt-gamma-inside-tanh": {"dyt": [((DYT_TANH, "torch.tanh(self.alpha * self.weight * x)"),)]},
    "bn-momentum-none-unsupported": {"batchnorm": [((BN_MOMENTUM, "self.momentum"),)]},
    "bn-momentum-hard-coded": {"batchnorm": [
        ((BN_MOMENTUM, WithConstant("{momentum}", MOMENTUM)),),
        ((BN_MOMENTUM, WithConstant("1.0 / self.num_batches_tracked.item() if self.momentum is None "
                                    "else {momentum}", MOMENTUM)),)]},
    "bn-running-never-updated": {"batchnorm": [((BN_RUNNING_MEAN, "self.running_mean"),
                                                (BN_RUNNING_VAR, "self.running_var"))]},
    "bn-running-init-first-batch": {"batchnorm": [
        ((BN_M, "m = 1.0 if self.num_batches_tracked.item() == 1 else "),)]},
    "bn-eval-no-affine": {"batchnorm": [((BN_AFFINE, "if self.weight is not None and batch_stats:"),)]},
    "gn-stats-per-position": {"groupnorm": [(
        (GN_GROUP, "x.reshape(n, self.num_groups, x.shape[1] // self.num_groups, -1)"
                   ".transpose(2, 3).reshape(n, -1, x.shape[1] // self.num_groups)"),
        (GN_UNGROUP, "g.reshape(n, self.num_groups, -1, x.shape[1] // self.num_groups)"
                     ".transpose(2, 3).reshape(x.shape)"))]},
    "dropout-p-one-nan": {"dropout": [((DROP_MASK, "return x * keep / (1.0 - self.p)"),)]},
    "dropout-batch-shared-mask": {"dropout": [((DROP_KEEP, "keep = torch.rand_like(x[0]) >= self.p"),)]},
    "lse-no-max-shift": {"log_softmax": [((SM_SHIFT, "z = x"),)],
                         "cross_entropy": [((CE_SHIFT, "z = logits"),)],
                         "mlp_with_batchnorm": [((MLP_SHIFT, "z = logits"),)],
                         "z_loss": [((Z_LSE, "lse = torch.exp(logits).sum(dim=1, keepdim=True).log()"),)]},
    "ce-log-eps": {"cross_entropy": [
        ((CE_LOGP, WithConstant("torch.log(torch.exp(z) / torch.exp(z).sum(dim=1, keepdim=True) "
                                "+ {eps})", LOG_EPS)),),
        ((CE_LOGP, WithConstant("torch.log(torch.clamp(torch.exp(z) / torch.exp(z).sum(dim=1, "
                                "keepdim=True), {clip}, 1 - {clip}))", CLIP)),),
        ((CE_LOGP, WithConstant("torch.log(torch.clamp(torch.exp(z) / torch.exp(z).sum(dim=1, "
                                "keepdim=True), min={clip}))", CLIP)),)]},
    "ce-first-sample-only": {"cross_entropy": [((CE_LOSS, "-logp[0, targets[0]]"),)]},
    "ce-sign-flipped": {"cross_entropy": [((LOSS_SIGN, "logp["),)]},
    "ce-logits-in-place": {"cross_entropy": [(
        (CE_SHIFT, "logits -= logits.amax(dim=1, keepdim=True)\n        z = logits"),)]},
    "dyt-alpha-init-ignored": {"dyt": [((DYT_ALPHA, WithConstant(DYT_ALPHA_AT, alpha)),)
                                       for alpha in (ALPHA, ALPHA_ONE)]},
    "eps-outside-sqrt": {
        **{name: [((X_HAT, "(torch.sqrt(var) + self.eps)"),)] for name in ("batchnorm",)},
        # or with x.std(...) + eps, whose autograd gives a constant row no variance term where
        # torch.sqrt(var) gives nan (sqrt's derivative at 0): the two spellings differ there
        **{name: [((X_HAT, "(torch.sqrt(var) + self.eps)"),),
                  ((STD_OF[name], STD_OF[name].replace(".var(", ".std(")), (X_HAT, "(var + self.eps)"))]
           for name in STD_OF},
        # also as the RMSNorm authors' code spells it, a 2-norm times D ** -1/2, whose autograd
        # gives a zero row a zero gradient where sqrt's gives nan
        "rmsnorm": [((RMS_RRMS, "h / (torch.sqrt(ms) + eps)"),),
                    ((RMS_RRMS, "h / (torch.linalg.vector_norm(h, dim=dims, keepdim=True) "
                                "* (ms.numel() / h.numel()) ** 0.5 + eps)"),)],
        "fold_batchnorm": [((FOLD_SCALE, "gamma / (torch.sqrt(running_var) + eps)"),)],
        "qk_norm": [((QK_RRMS, "1 / (torch.sqrt(t.pow(2).mean(dim=self.norm_dims, keepdim=True)) + eps)"),)]},
    "attn-no-scale": {"attention": [((ATT_SCORES, "scores = q @ k.transpose(-2, -1)"),)],
                      "qk_norm": [((QK_SCORES, "scores = qn @ kn.transpose(-2, -1)"),)]},
    "qk-norm-shared-gamma": {"qk_norm": [((QK_KNORM, "kn = self.rms_norm(k, self.gamma_q)"),)]},
    "softcap-outer-cap-missing": {"soft_cap": [((CAP_Y, "torch.tanh(x / self.cap)"),)]},
    "softcap-hard-clip": {"soft_cap": [((CAP_Y, "torch.clamp(x, -self.cap, self.cap)"),)]},
    "zloss-shifted-lse": {"z_loss": [((Z_TERM, "self.z_loss * (lse - m).pow(2).mean()"),)]},
    "zloss-not-squared": {"z_loss": [((Z_TERM, "self.z_loss * lse.mean()"),)]},
    "zloss-summed-not-averaged": {"z_loss": [((Z_TERM, "self.z_loss * lse.pow(2).sum()"),)]},
    "qk-norm-mean-subtracted": {"qk_norm": [(
        (QK_RETURN, "t = t - t.mean(dim=self.norm_dims, keepdim=True)\n        return t * "),)]},
}

TORCH_ONLY = [
    TorchMistake(
        "torch-var-unbiased",
        N_("torch.var / torch.std with their default Bessel correction"),
        N_("outputs are a little too small in magnitude (by about sqrt((n - 1) / n)), strongly so "
           "for small n such as a batch of 2: x.var(dim) divides by n - 1 unless told otherwise"),
        N_("torch.var and torch.std default to the unbiased estimate (correction=1). Normalise with "
           "x.var(dim, unbiased=False) (or correction=0); only BatchNorm's running_var takes the "
           "unbiased one."),
        _torch({**{name: [((BIASED, ""),)] for name in ("layernorm", "transformer_block",
                                                       "mlp_with_batchnorm", "groupnorm")},
                "batchnorm": [((BIASED, ""),), ((BIASED, ""), (BN_UNBIASED, "var.flatten()"))]}),
        learn=torch_solution("layernorm"),
    ),
    TorchMistake(
        "torch-no-keepdim",
        N_("a reduction without keepdim=True"),
        N_("the statistics lose their reduced dim, so they broadcast against the wrong dim of x: "
           "a shape error for most inputs, and wrong numbers where the sizes happen to agree "
           "(a square input, or C == L)"),
        N_("Reduce with keepdim=True (x.mean(dim, keepdim=True)) so that the statistic keeps a "
           "dim of size 1 where it was taken and broadcasts back along it."),
        _torch({**{name: [_keepdim_dropped(MEAN, VAR)] for name in ("layernorm", "batchnorm")},
                "rmsnorm": [_keepdim_dropped(Anchor("mean-square", "h.pow(2).mean(dim=dims, keepdim=True)"))],
                "weight_norm": [_keepdim_dropped(WN_NORM_DIM)],
                "softmax": [_keepdim_dropped(SM_MAX, SM_SUM)],
                "log_softmax": [_keepdim_dropped(SM_MAX, LSM_SUM)]}),
        learn=torch_solution("layernorm"),
    ),
    TorchMistake(
        "torch-wrong-dim",
        N_("a hard-coded dim=1"),
        N_("right for a 2-D input, wrong for more dims: dim=1 is the last dim only when x is "
           "(N, D), so a (B, T, D) input is normalised over T (a softmax along dim 1 instead of "
           "the dim asked for)"),
        N_("Name the dims from the end: the last len(normalized_shape) dims are "
           "range(-len(normalized_shape), 0); a softmax takes the dim it was built with."),
        _torch({**{name: [((DIMS, "dims = (1,)"),)] for name in TRAILING},
                **{name: [((SM_DIM, "self.dim = 1"),)] for name in SOFTMAXES}}),
        learn=torch_solution("layernorm"),
    ),
    TorchMistake(
        "torch-not-registered",
        N_("a tensor not registered as an nn.Parameter or a buffer"),
        N_("the tensor is missing from parameters() and state_dict(): it gets no gradient (an "
           "optimizer never updates it), is not saved, and stays behind when the module is moved "
           "with .to() (.double(), .cuda())"),
        N_("Wrap learnable tensors in nn.Parameter and register running statistics with "
           "self.register_buffer(name, tensor); a plain tensor attribute is invisible to the module."),
        _torch({**{name: [tuple((a, _plain(a, grad)) for a in (WEIGHT[name], BIAS[name]))
                          for grad in (False, True)]
                   for name in ("layernorm", "groupnorm")},
                "rmsnorm": [((WEIGHT["rmsnorm"], _plain(WEIGHT["rmsnorm"], grad)),)
                            for grad in (False, True)],
                "transformer_block": [tuple((a, _plain(a, grad)) for a in BLOCK_PARAMS)
                                      for grad in (False, True)],
                "batchnorm": [((BN_BUFFERS[0], "self.running_mean = torch.zeros(num_features)"),
                               (BN_BUFFERS[1], "self.running_var = torch.ones(num_features)"))],
                "dyt": [((DYT_ALPHA, "torch.full((1,), float(alpha_init))"),),
                        ((DYT_ALPHA, "torch.full((1,), float(alpha_init), requires_grad=True)"),)],
                "attention": [((ATT_WQ, ATT_WQ.removeprefix("nn.Parameter(")[:-1]),)],
                "qk_norm": [((QK_GAMMA_Q, QK_GAMMA_Q.removeprefix("nn.Parameter(")[:-1]),)],
                "weight_norm": [((WN_G, _plain(WN_G, grad)),) for grad in (False, True)]}),
        learn=torch_solution("batchnorm"),
    ),
    TorchMistake(
        "torch-running-with-grad",
        N_("running statistics updated with autograd history"),
        N_("the numbers are right, but running_mean and running_var require grad after a training "
           "step: they carry the graph of every batch so far (memory grows, and an evaluation "
           "backward reaches back into old batches)"),
        N_("Update buffers under torch.no_grad() (or from mean.detach()): a running statistic is "
           "a record, not part of the computation to differentiate."),
        _torch({"batchnorm": [((BN_NO_GRAD, "if True:"),)],
                "sync_batchnorm": [((SYNC_NO_GRAD, "if True:"),)]}),
        learn=torch_solution("batchnorm"),
    ),
    TorchMistake(
        "torch-data-detach",
        N_(".data used in the forward"),
        N_("the forward is right, some gradients are not: x.data (or weight.data) is a tensor "
           "without history, so autograd treats the statistics as constants (dx loses the paths "
           "through them) or gives the parameter no gradient"),
        N_("Never use .data in a forward: it silently cuts the graph. Write x.mean(...) and "
           "self.weight; use .detach() only where a value is meant to be a constant."),
        _torch({**{name: [((MEAN, "x.data.mean(dim=dims, keepdim=True)"),
                           (VAR, "x.data.var(dim=dims, unbiased=False, keepdim=True)")),
                          ((SCALE, "y * self.weight.data"),)] for name in ("layernorm",)},
                "batchnorm": [((MEAN, "x.data.mean(dim=dims, keepdim=True)"),
                               (VAR, "x.data.var(dim=dims, unbiased=False, keepdim=True)"))],
                "groupnorm": [((G_MEAN, "g.data.mean(dim=-1, keepdim=True)"),
                               (G_VAR, "g.data.var(dim=-1, unbiased=False, keepdim=True)"))],
                "rmsnorm": [((RMS_MS, "ms = h.data.pow(2).mean(dim=dims, keepdim=True)"),)],
                "dyt": [((DYT_U, "self.alpha.data * x"),)],
                "weight_norm": [((WN_G_TIMES, "self.weight_g.data *"),)]}),
        learn=torch_solution("layernorm"),
    ),
    TorchMistake(
        "torch-in-place",
        N_("an in-place operation on the input"),
        N_("the caller's tensor is changed by the forward (x.sub_(...), x.mul_(...)), and the "
           "backward fails where autograd had saved that tensor: 'one of the variables needed "
           "for gradient computation has been modified by an inplace operation'"),
        N_("Write x - mean, not x.sub_(mean): the input belongs to the caller (and to the layer "
           "before, whose backward may need it). In-place ops are for tensors the forward created."),
        _torch({**{name: [((X_HAT_LINE[name], X_HAT_LINE[name].replace(
                     "(x - mean) / ", "x.sub_(mean).div_(").replace("(g - mean) / ", "g.sub_(mean).div_(") + ")"),)]
                   for name in MEAN_VAR_NORMS},
                "rmsnorm": [((RMS_RRMS, "h.mul_(torch.rsqrt(ms + eps))"),)],
                "dropout": [((DROP_MASK, "return x.mul_(keep).mul_(scale)"),)],
                **{name: [((SM_SHIFT, "z = x.sub_(x.amax(dim=self.dim, keepdim=True))"),),
                          ((SM_SHIFT, "z = x.sub_(x.amax(dim=self.dim, keepdim=True).detach())"),)]
                   for name in SOFTMAXES},
                "dyt": [((DYT_U, "x.mul_(self.alpha)"),)],  # cross_entropy: ce-logits-in-place
                "soft_cap": [((CAP_X, "x.div_(self.cap)"),)],
                "fold_batchnorm": [((FOLD_WEIGHT, "W.mul_(s[:, None])"),)],
                "fold_norm_affine": [((AFFINE_WEIGHT, "W.mul_(gamma[None, :])"),)]}),
        learn=torch_solution("layernorm"),
    ),
    TorchMistake(
        "torch-rmsnorm-no-upcast",
        N_("a float16 RMSNorm computed without the float32 upcast"),
        N_("right in float32 and float64, wrong in float16: x**2 overflows to inf as soon as "
           "|x| > 256 (and small squares lose their digits), so whole rows come out as 0 or nan"),
        N_("Compute the mean square in float32: h = x.float() (or x.to(torch.float32)), normalise, "
           "then cast back with .to(x.dtype) before the weight, as LLaMA's RMSNorm does."),
        # eps=None then float16's machine epsilon, or still float32's (as torch.nn.RMSNorm)
        _torch({"rmsnorm": [((RMS_UPCAST, "h = x"),),
                            ((RMS_UPCAST, "h = x"),
                             (RMS_EPS, "torch.finfo(torch.promote_types(x.dtype, torch.float32))"))]}),
        learn=torch_solution("rmsnorm"),
    ),
    TorchMistake(
        "torch-wn-g-shape",
        N_("WeightNorm's g of shape (out,) instead of (out, 1)"),
        N_("g is a vector (out,), where torch's weight_norm keeps it (out, 1): the state_dict does "
           "not load torch's, and g * v / ||v|| scales each column of v by one g instead of each "
           "row, a shape error unless in == out and wrong numbers where they agree"),
        N_("Keep g of shape (out, 1), one length per output row, as torch.nn.utils.weight_norm "
           "does: nn.Parameter(torch.ones(out_features, 1)) scales each row of v (out, in) by its "
           "own g."),
        _torch({"weight_norm": [((WN_G_SHAPE, "torch.ones(out_features)"),),
                                ((WN_G_SHAPE, "torch.ones(out_features)"),
                                 (WN_G_TIMES, "self.weight_g[:, None] *"))]}),
        learn=torch_solution("weight_norm"),
    ),
]

CATALOG = [replace(BY_ID[mistake_id], variants=_torch(variants))
           for mistake_id, variants in FORWARD_VARIANTS.items()] + TORCH_ONLY

for _mistake in TORCH_ONLY:  # a report looks mistakes up by id (the catalog package's one line)
    BY_ID.setdefault(_mistake.id, _mistake)


def mistakes_for(key):
    """The torch track's entries with variants under ``key`` (``torch/layernorm``)."""
    return [m for m in CATALOG if key in m.variants]
