"""Step-throughs of two layers built from the norms: QK-norm, attention's queries and keys
normalised per head before the scores, and SyncBatchNorm, BatchNorm over a batch split across
ranks, with its all-reduces as nodes of the tape.

    st = step_through("qk_norm", shape=(2, 3, 4), qk_norm="layernorm")  # H = 2 heads, T = 3, D = 4
    st = step_through("sync_batchnorm", shape=(5, 3), ranks=2)          # rows 0:3 and 3:5

Their chains reuse the norms' nodes (``core.rms_normalize``, ``core.standardize``,
``core.affine``), marked with the lane they
run on (q or k, rank 0, 1...), and each is checked as the other step-throughs are: against
normcore's own compact backward and against central differences of every node.
"""

import math

import numpy as np

from .. import norms
from ..distributed import InProcessGroup, SyncBatchNorm
from ..distributed.syncbatchnorm import AGREEMENT
from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn.attention import MultiheadAttention, qk_norm_choice
from .core import (COMPACT_ATOL, COMPACT_TOL, StepThrough, affine, check, layer_eps, letters, named,
                   rms_normalize, standardize, upstream, verdict)
from .registry import register
from .tape import Joined, Phrase, Tape

_ = translator("explain")
message_name = translator("cli")  # the names of SyncBatchNorm's messages (normcore.distributed)

SYNC_RANKS = 2  # the default number of simulated ranks


def _no_gamma_or_beta(title, gamma, beta):
    if gamma is not None or beta is not None:
        raise ValueError(_("gamma and beta are drawn from the seed in the {title} step-through "
                           "(it has more than one norm or replica); leave them out").format(title=title))


COMPACT = {
    "qk_norm": Phrase(N_("{dq}: each norm's own compact backward, {y}"),
                      dq="dq = q_norm.backward(ds @ y_k / sqrt(D)), dk = k_norm.backward(ds^T @ y_q / sqrt(D))",
                      y="y_q = q_norm(q), y_k = k_norm(k)"),
    "sync_batchnorm": Phrase(N_("{dx}; both means over every rank, from one all-reduce of {sums}"),
                             dx="dx_r = rstd * (dx_hat_r - mean_N(dx_hat) - x_hat_r * mean_N(dx_hat * x_hat)),"
                                " dx_hat = dy * gamma", sums="[sum dy_r, sum dy_r * x_hat_r]"),
}


# --- QK-norm ---------------------------------------------------------------------------------
def qk_norm_tape(q, k, q_norm, k_norm, eps, over_params):
    """Each head's rows of q and of k normalised over their D channels (the norm's own nodes,
    one chain per input), scaled by the norm's gamma (and shifted by beta, where the layer has
    one), then the scores s = y_q @ y_k^T / sqrt(D)."""
    t = Tape()
    q, k = t.leaf("q", q), t.leaf("k", k)
    params = {}
    for of, layer in (("q", q_norm), ("k", k_norm)):
        params[of] = (t.leaf(f"gamma_{of}", layer.weight.data, rf"\gamma_{{{of}}}"),
                      None if layer.bias is None else t.leaf(f"beta_{of}", layer.bias.data, rf"\beta_{{{of}}}"))
    normalize = rms_normalize if isinstance(q_norm, norms.RMSNorm) else standardize
    axes, D = (q.value.ndim - 1,), q.value.shape[-1]
    normalised = {}
    for of, leaf in (("q", q), ("k", k)):
        hat = normalize(t, leaf, eps, axes, "D", f"{of}_hat", rf"\hat{{{of}}}", of=of)
        normalised[of] = affine(t, hat, *params[of], over_params, of=of)
    swap = tuple(range(q.value.ndim - 2)) + (q.value.ndim - 1, q.value.ndim - 2)
    k_t = t.transpose(normalised["k"], swap, "kT", N_("transpose"), r"y_{k}^{\top}")
    qk = t.matmul(normalised["q"], k_t, "qk", N_("dot products"), "G")
    t.scale(qk, 1.0 / math.sqrt(D), "1/sqrt(D)", "s", N_("scale"), "s", r"\tfrac{1}{\sqrt{D}}")
    return t


def _qk_lanes(tape):
    """The graph's rows: q's chain above k's, each norm's statistics and parameters beyond its
    chain, the scores on q's row."""
    rows = {}
    for node in tape:
        lane = 1 if node.name in ("q", "q_hat") or node.name.endswith("_q") else 0  # q's row, k's row
        parameter = node.is_leaf and node.name not in ("q", "k")
        on_chain = not parameter and (node.is_leaf or node.step in ("centre", "normalise", "scale", "shift",
                                                                     "transpose"))
        rows[node.name] = lane if on_chain else 2 if lane else -1
    return {**rows, "qk": 1, "s": 1}


def qk_norm_step_through(kind, title, q, rng, *, dy, h, gamma=None, beta=None, qk_norm=None):
    """q of shape (..., T, D) (heads and batches lead), k drawn like it; the scores' gradient."""
    _no_gamma_or_beta(title, gamma, beta)
    choice = "rmsnorm" if qk_norm is None else qk_norm_choice(qk_norm, "step_through")
    k = rng.standard_normal(q.shape) * 2.0 + 1.0
    D = q.shape[-1]
    attention = MultiheadAttention(D, 1, qk_norm=choice, rng=0)  # its q_norm and k_norm, as configured there
    q_norm, k_norm = attention.q_norm, attention.k_norm
    for layer in (q_norm, k_norm):
        randomize_parameters(layer, rng)
    axis_letters = ("T", "D") if q.ndim == 2 else ("H", "T", "D") if q.ndim == 3 else ("B", "H", "T", "D")
    over_params = ",".join(axis_letters[:-1])
    tape = qk_norm_tape(q, k, q_norm, k_norm, layer_eps(q_norm), over_params)
    dy = upstream(dy, rng, tape.output.value.shape)

    # the reference: the attention's norm layers, their compact backward composed as
    # MultiheadAttention's backward composes them (dq = dS @ k / sqrt(D), then q_norm.backward)
    y_q, y_k = q_norm.forward(q), k_norm.forward(k)
    s_ref = y_q @ np.swapaxes(y_k, -1, -2) / math.sqrt(D)
    reference = {"q": q_norm.backward(dy @ y_k / math.sqrt(D)),
                 "k": k_norm.backward(np.swapaxes(dy, -1, -2) @ y_q / math.sqrt(D))}
    for of, layer in (("q", q_norm), ("k", k_norm)):
        reference[f"gamma_{of}"] = layer.weight.grad
        if layer.bias is not None:
            reference[f"beta_{of}"] = layer.bias.grad
    name = "RMSNorm" if choice == "rmsnorm" else "LayerNorm"
    st = StepThrough("qk_norm", f"QK-norm ({name})", tape, dy, layer_eps(q_norm), "D",
                     Phrase(N_("MultiheadAttention's q_norm and k_norm ({name}) backward, composed as its "
                               "backward composes them"), name=name), COMPACT["qk_norm"],
                     what=Phrase(N_("k of the same shape, each row of q and k normalised over its D = {d} "
                                    "channels, then the scores y_q y_k^T / sqrt(D), eps = {eps:.3g}"),
                                 d=D, eps=layer_eps(q_norm)),
                     loss_line=Phrase(N_("Loss L = sum(s * dy) with a random dy (in attention, the softmax's "
                                         "gradient dS), so dL/ds = dy.")))
    check(st, s_ref, reference, h)
    st.notes = _qk_notes(tape, q, k, D, k_norm.bias is None and choice == "layernorm")
    st.properties = _qk_properties(tape, choice)
    st.lanes, st.inputs = _qk_lanes(tape), ("k",)
    return st


def _qk_notes(tape, q, k, D, no_beta_k):
    """The teaching point, measured: the norms bound the scores, whatever q and k are."""
    raw = float(np.max(np.abs(q @ np.swapaxes(k, -1, -2)))) / math.sqrt(D)
    bound = _score_bound(tape, D)
    notes = [Phrase(N_("max |s| = {s:.4g} here; without the norms, q k^T / sqrt(D) on the same q and k "
                       "reaches {raw:.4g}. With them |s| <= |y_q| |y_k| / sqrt(D) <= {bound:.4g} "
                       "(Cauchy-Schwarz, |x_hat| <= sqrt(D)): a bound set by gamma and beta alone, not "
                       "by the size of q and k."), s=float(np.max(np.abs(tape.output.value))), raw=raw,
                    bound=bound)]
    if no_beta_k:
        notes.append(Phrase(N_("k_norm has no beta, as in MultiheadAttention: after the softmax, q_i . beta_k "
                               "would be the same for every key of row i, which the softmax ignores.")))
    return notes


def _score_bound(tape, D):
    """(max|gamma_q| sqrt(D) + |beta_q|) (max|gamma_k| sqrt(D) + |beta_k|) / sqrt(D)."""
    def row_bound(of):
        beta = tape[f"beta_{of}"].value if f"beta_{of}" in (n.name for n in tape) else np.zeros(1)
        return np.max(np.abs(tape[f"gamma_{of}"].value)) * math.sqrt(D) + np.linalg.norm(beta)
    return float(row_bound("q") * row_bound("k") / math.sqrt(D))


def _qk_properties(tape, choice):
    """What dq and dk must satisfy, measured: each row's norm ignores a rescaling of the row
    (RMSNorm and LayerNorm) and a shift (LayerNorm)."""
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    props = []
    for of in ("q", "k"):
        leaf = tape[of]
        props.append((Phrase(N_("{sum}: the scores ignore a rescaling of each row of {of} (up to eps)"),
                             sum=f"sum_D(d{of} * {of})", of=of),
                      worst(np.sum(leaf.grad * leaf.value, axis=-1))))
        if choice == "layernorm":
            props.append((Phrase(N_("{sum}: the scores ignore a shift of each row of {of}"), sum=f"sum_D(d{of})",
                                 of=of),
                          worst(leaf.grad.sum(axis=-1))))
    return props


# --- SyncBatchNorm ---------------------------------------------------------------------------
def sync_batchnorm_tape(shards, gamma, beta, eps, axes, over):
    """BatchNorm over the ranks' shards together: each rank sums its shard, an all-reduce adds
    the sums (the global mean), each rank sums its squared deviations from that mean, a second
    all-reduce adds them (the global variance), each rank normalises, scales and shifts its own
    rows; the outputs side by side make the loss."""
    t = Tape()
    ranks = [str(r) for r in range(len(shards))]
    xs = [t.leaf(value=x, **named(r, "x", "x")) for r, x in zip(ranks, shards)]
    g, b = t.leaf("gamma", gamma, r"\gamma"), t.leaf("beta", beta, r"\beta")
    N = sum(x.value.size for x in xs) // gamma.size  # values per channel, over every rank
    divide = dict(c=1.0 / N, cname=f"1/{N}", step=N_("divide by N"), ctex=rf"\tfrac{{1}}{{{N}}}")
    # forward, round 1: each rank's sum; their total over the ranks gives the mean
    sums = [t.sum(x, axes, step=N_("sum"), over=over, **named(r, "sum", "s")) for r, x in zip(ranks, xs)]
    mean = t.scale(t.all_reduce(sums, "S", N_("all-reduce"), "S"), name="mean", tex=r"\mu", **divide)
    # round 2: each rank's squared deviations from that mean; their total gives the variance
    centred, deviations = [], []
    for r, x in zip(ranks, xs):
        centred.append(t.sub(x, mean, step=N_("centre"), over=over, **named(r, "xc", "x_c")))
        square = t.square(centred[-1], step=N_("square"), **named(r, "xc2", "q"))
        deviations.append(t.sum(square, axes, step=N_("sum"), over=over, **named(r, "m2", "m")))
    var = t.scale(t.all_reduce(deviations, "M2", N_("all-reduce"), "M"), name="var", tex=r"\sigma^2", **divide)
    var_eps = t.add_constant(var, eps, "eps", "var_eps", N_("add eps"), "v", r"\epsilon")
    rstd = t.rsqrt(var_eps, "rstd", N_("rsqrt"), "r")
    # each rank normalises, scales and shifts its own rows
    ys = [affine(t, t.mul(xc, rstd, step=N_("normalise"), over_b=over, **named(r, "x_hat", r"\hat{x}")),
                  g, b, over, of=r) for r, xc in zip(ranks, centred)]
    t.concat(ys, 0, "y", N_("side by side"), "y")
    return t


def _sync_lanes(tape):
    """The graph's rows: the shared nodes (all-reduces, statistics, parameters) in the middle,
    rank 0 above them, ranks 1, 2... below; each rank's chain x -> xc -> x_hat -> y on the row
    farther out, its sums on the row nearer the middle."""
    rows = {}
    for node in tape:
        rank = node.name.rsplit("_", 1)[-1]
        if not rank.isdigit():
            rows[node.name] = 0
            continue
        sums = node.step in ("sum", "square")
        side = 1 if rank == "0" else -1
        rows[node.name] = side * (2 * max(int(rank), 1) - sums)
    return rows


def _ranks(ranks):
    """The number of simulated ranks: 1 to 8 (each adds a lane of nodes to the tape)."""
    if ranks is None:
        return SYNC_RANKS
    if isinstance(ranks, bool) or not isinstance(ranks, (int, np.integer)) or not 1 <= ranks <= 8:
        raise ValueError(_("ranks must be a whole number from 1 to 8 (the simulated workers), got {r!r}")
                         .format(r=ranks))
    return int(ranks)


def sync_batchnorm_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, ranks=None):
    """x of shape (N, C, *L), the whole batch, split along N over ``ranks`` simulated ranks."""
    _no_gamma_or_beta(title, gamma, beta)
    R = _ranks(ranks)
    if x.size // x.shape[1] < 2:
        raise ValueError(_("SyncBatchNorm needs more than one value per channel over all ranks, got "
                           "input of shape {shape}").format(shape=x.shape))
    axis_letters = letters("batchnorm", x.ndim)
    axes = (0,) + tuple(range(2, x.ndim))
    over = ",".join(axis_letters[a] for a in axes)
    C = x.shape[1]
    view = (C,) if x.ndim == 2 else (1, C) + (1,) * (x.ndim - 2)
    shards = np.array_split(x, R)  # the first N % R ranks hold one row more
    log = []
    group = InProcessGroup(R, log=log)
    layers = [SyncBatchNorm(C, process_group=w) for w in group.workers]
    randomize_parameters(layers[0], rng)
    for layer in layers[1:]:  # every replica holds the same parameters
        layer.weight.data[...], layer.bias.data[...] = layers[0].weight.data, layers[0].bias.data
    gamma, beta, eps = layers[0].weight.data, layers[0].bias.data, layers[0].eps
    tape = sync_batchnorm_tape(shards, gamma.reshape(view), beta.reshape(view), eps, axes, over)
    dy = upstream(dy, rng, x.shape)
    cuts = np.cumsum([len(s) for s in shards])[:-1]

    # the reference: normcore's SyncBatchNorm on every rank of one simulated group
    y_ranks = group.run(lambda worker, shard: layers[worker.rank].forward(shard), shards)
    dx_ranks = group.run(lambda worker, g: layers[worker.rank].backward(g), np.split(dy, cuts))
    reference = {f"x_{r}": dx for r, dx in enumerate(dx_ranks)}
    reference["gamma"] = sum(layer.weight.grad for layer in layers)  # each replica's local share
    reference["beta"] = sum(layer.bias.grad for layer in layers)
    rows = Joined(Phrase(N_("rank {r}: rows {a}:{b}") if a < b else N_("rank {r}: no rows"), r=r, a=a, b=b)
                  for r, (a, b) in enumerate(zip([0, *cuts], [*cuts, len(x)])))
    N = x.size // C
    st = StepThrough("sync_batchnorm", "SyncBatchNorm", tape, dy, eps, over,
                     Phrase(N_("SyncBatchNorm.backward over InProcessGroup({r})"), r=R), COMPACT["sync_batchnorm"],
                     what=Phrase(N_("rank 0's share of x {shape} split over {r} ranks, statistics over {over} "
                                    "of all ranks together (N = {n} values per channel), eps = {eps:.3g}"),
                                 shape=x.shape, r=R, over=over, n=N, eps=eps),
                     notes=[Phrase(N_("The rows of x on each rank: {rows}."), rows=rows),
                            *_sync_notes(log)])
    check(st, np.concatenate(y_ranks), reference, h)
    st.checks += _against_batchnorm(tape, x, dy, gamma, beta, eps, R, cuts)
    st.properties = _sync_properties(tape, log, axes, R)
    st.lanes, st.inputs = _sync_lanes(tape), tuple(f"x_{r}" for r in range(1, R))
    return st


class _MessageName(Phrase):
    """The name of a message SyncBatchNorm sent (normcore.distributed marks it), said in the
    language in use."""

    def __init__(self, name):
        super().__init__(name)

    def __str__(self):
        return message_name(self.message)


def _sync_notes(log):
    """What normcore's SyncBatchNorm sent, and how the tape's backward relates to it."""
    sizes = Joined((Phrase(N_("{name} ({n})"), name=_MessageName(m.name), n=m.received.size) for m in log),
                   sep=N_("; "))
    return [Phrase(N_("normcore's SyncBatchNorm sent {n} all-reduce messages (values each): {sizes}."),
                   n=len(log), sizes=sizes),
            Phrase(N_("The first carries no data: every rank's layer and input shape (num_features, protocol, "
                      "dtype, shape), compared before any data moves, so that ranks that disagree all raise "
                      "the same error instead of waiting for each other.")),
            Phrase(N_("On the tape, S and M2 are the two forward all-reduces. In the backward, the gradient "
                      "of a shared node (mean, rstd) adds every rank's share: that sum over the ranks is the "
                      "backward's all-reduce, which normcore sends as one message of [sum dy, sum dy * x_hat] "
                      "per channel; S and M2 then hand the total back to every rank.")),
            Phrase(N_("This is normcore's default protocol. With protocol=\"gather\", PyTorch's, the two "
                      "forward all-reduces become one all_gather of every rank's [mean, invstd, count], "
                      "merged as the variance within the ranks plus the spread of their means between "
                      "them; the backward's all-reduce stays.")),
            Phrase(N_("The checks also compare with plain BatchNorm on the rows put back together: "
                      "the two must agree."))]


def _against_batchnorm(tape, x, dy, gamma, beta, eps, R, cuts):
    """The same checks against plain BatchNorm on the concatenated batch: they must agree."""
    bn = (norms.BatchNorm1d if x.ndim < 4 else norms.BatchNorm2d)(x.shape[1], eps=eps)
    bn.weight.data[...], bn.bias.data[...] = gamma, beta
    y = bn.forward(x)
    dx = np.split(bn.backward(dy), cuts)
    pairs = [("y", tape.output.value, y)] + [(f"x_{r}", tape[f"x_{r}"].grad, dx[r]) for r in range(R)]
    pairs += [("gamma", tape["gamma"].grad, bn.weight.grad), ("beta", tape["beta"].grad, bn.bias.grad)]
    return [verdict(name, "batchnorm", staged, ref, COMPACT_TOL, COMPACT_ATOL) for name, staged, ref in pairs]


def _sync_properties(tape, log, axes, R):
    """What the staged gradients satisfy over all ranks, and how the tape's all-reduces match
    the messages normcore's SyncBatchNorm sent: each value should be 0 up to rounding."""
    log = [m for m in log if m.name != AGREEMENT]                   # the three that carry data
    worst = lambda a: float(np.max(np.abs(a))) if np.size(a) else 0.0  # noqa: E731
    dx = sum(tape[f"x_{r}"].grad.sum(axis=axes) for r in range(R))
    dx_x_hat = sum((tape[f"x_{r}"].grad * tape[f"x_hat_{r}"].value).sum(axis=axes) for r in range(R))
    backward = np.concatenate([tape["beta"].grad.ravel(), tape["gamma"].grad.ravel()])
    return [(Phrase(N_("sum over every rank of dx, per channel: the output ignores a shift of the whole batch")),
             worst(dx)),
            (Phrase(N_("sum over every rank of dx * x_hat, per channel: it ignores a rescaling (up to eps)")),
             worst(dx_x_hat)),
            (Phrase(N_("S - normcore's first data all-reduce (sum x per channel)")), worst(tape["S"].value.ravel()
                                                                            - log[0].received[1:])),
            (Phrase(N_("M2 - normcore's second data all-reduce (the squared deviations summed per channel)")),
             worst(tape["M2"].value.ravel() - log[1].received)),
            (Phrase(N_("[dbeta, dgamma] - normcore's backward all-reduce [sum dy, sum dy * x_hat]")),
             worst(backward - log[2].received))]


register("qk_norm", "QK-norm", (2, 3, 4), qk_norm_step_through, options=("qk_norm",),
         description=N_("q and k normalised per head before the scores"))
register("sync_batchnorm", "SyncBatchNorm", (2, 3, 4), sync_batchnorm_step_through, options=("ranks",),
         description=N_("BatchNorm over a batch split across simulated ranks"))
