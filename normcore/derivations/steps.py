"""Step-throughs: BatchNorm, LayerNorm, RMSNorm, DyT and softmax as tapes of elementary nodes,
with the staged gradient checked against the layer's compact backward and central differences;
also log-softmax, cross-entropy (ending in the scalar loss) and GELU in its erf and tanh forms.

    st = step_through("layernorm", shape=(3, 4), seed=0)
    print(st.text())               # the forward, the backward node by node, the checks
    st.tape["rstd"].grad           # dL/d rstd, from the elementary rules alone
    st.passed                      # every check exact or close

The tape uses the layer's own parameters (random gamma and beta) and eps, so the comparison is
with exactly the computation ``layer.forward`` / ``layer.backward`` perform.
"""

from dataclasses import dataclass, field

import numpy as np

from .. import norms
from .._array import flag, real_number
from ..gradcheck import rel_error
from ..i18n import N_, translator
from ..nn import GELU, CrossEntropyLoss, Dropout, LogSoftmax, Softmax
from ..layer_cases import randomize_parameters
from .tape import Phrase, Tape

_ = translator("explain")

COMPACT_TOL = 1e-10  # staged vs compact: the same arithmetic in another order, rounding only:
COMPACT_ATOL = 1e-13  # relative error, or absolute difference where the gradient is about 0
NUMERICAL_TOL = 1e-6  # staged vs central differences with h = 1e-6: relative error, or
NUMERICAL_ATOL = 1e-8  # absolute difference where the gradient itself is about 0 (softmax's max)


@dataclass
class GradientComparison:
    """One comparison of a staged value with a reference: ``verdict`` is exact, close or DIFFERS
    (English here, translated where it is shown)."""

    node: str
    against: str  # "compact" or "numerical"
    max_diff: float
    rel_error: float
    verdict: str


@dataclass
class StepThrough:
    """A tape with its backward done, and the checks of its gradients."""

    kind: str  # "layernorm"
    title: str  # "LayerNorm" (or a Phrase: "self-attention", "Pre-Norm residual")
    tape: Tape
    dy: np.ndarray  # the upstream gradient dL/dy
    eps: float
    over: str  # the normalised axes, e.g. "D" or "N"
    reference: str  # what the staged gradient is compared with, e.g. "LayerNorm.backward"
    compact: str  # the compact backward formula, in plain text
    checks: list = field(default_factory=list)
    properties: list = field(default_factory=list)  # (description, value) that should be ~0
    # the sentences below (and compact, a description) may be Phrases: said in the language in use
    what: str = ""  # what the step-through computes, for the headings (default: from kind)
    mask: np.ndarray = None  # dropout's fixed mask (True keeps the element), printed with x
    loss_line: str = ""  # how L is made from the output (default: L = sum(y * dy))
    notes: list = field(default_factory=list)  # lines printed under the heading (e.g. the targets)
    target: np.ndarray = None  # cross_entropy: the class index of each row
    route_target: str = ""  # where the graph's routes from x end (default: x_hat, else the output)
    route_names: dict = field(default_factory=dict)  # the graph's route "through the mean" -> {"mean": ...}
    lanes: dict = None  # node name -> row of the graph, for a tape of parallel chains (q and k, ranks)
    inputs: tuple = ()  # the input leaves after the first (k, the other ranks' x): not parameters

    @property
    def passed(self):
        return all(c.verdict != "DIFFERS" for c in self.checks)

    def check(self, node, against):
        for c in self.checks:
            if c.node == node and c.against == against:
                return c
        raise KeyError(f"no {against} check of node {node!r}; expected one of the checks "
                       f"{[(c.node, c.against) for c in self.checks]}")

    def text(self, width=80, latex=True, parts=("forward", "backward", "checks")):
        """The step-through as text at most ``width`` columns wide; ``parts`` picks sections."""
        from .render import render_text
        return render_text(self, width=width, latex=latex, parts=parts)

    def markdown(self):
        from .render import render_markdown
        return render_markdown(self)

    def graph(self):
        """The tape's computation graph (``Graph``): ``.save(path)`` writes it as a PNG, or as an
        SVG for a .svg name."""
        from .graph import computation_graph
        return computation_graph(self)

    def __str__(self):
        return self.text()


# --- the tapes -------------------------------------------------------------------------------
def _affine(tape, x_hat, gamma, beta, over_params, of="", out=None):
    """scale then shift: y = x_hat * gamma + beta (beta may be None). ``of`` marks the nodes of a
    chain that runs more than once on a tape (see ``_named``); ``out`` = (name, TeX) names the
    result otherwise (a residual block's h, y or o)."""
    last = dict(zip(("name", "tex"), out)) if out else _named(of, "y", "y")
    scaled = last if beta is None else _named(of, "scaled", "s")  # the scale is the last step without beta
    y = tape.mul(x_hat, gamma, step=N_("scale"), over_b=over_params, **scaled)
    if beta is not None:
        y = tape.add(y, beta, step=N_("shift"), over_b=over_params, **last)
    return y


def _named(of, name, tex):
    r"""A node's name and LaTeX symbol, marked with ``of`` for a chain that runs more than once
    on one tape (QK-norm's q and k, SyncBatchNorm's ranks): ("mean", r"\mu") of "q" is
    ("mean_q", r"\mu_{q}"), ("xc", "x_c") is ("xc_q", "x_{c,q}"); without ``of``, unchanged."""
    if not of:
        return {"name": name, "tex": tex}
    base, power = tex.split("^", 1) if "^" in tex else (tex, "")
    head, low = base.split("_", 1) if "_" in base else (base, "")
    sub = f"{low.strip('{}')},{of}" if low else of
    return {"name": f"{name}_{of}", "tex": f"{head}_{{{sub}}}" + (f"^{power}" if power else "")}


def standardize_tape(x, gamma, beta, eps, axes, over, over_params):
    """mean, centre, square, variance, add eps, rsqrt, normalise, scale, shift (BN and LN)."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    x_hat = _standardize(t, x, eps, axes, over, "x_hat", r"\hat{x}")
    _affine(t, x_hat, g, b, over_params)
    return t


def _standardize(t, x, eps, axes, over, name, tex, of=""):
    """The standardisation nodes: mean, centre, square, variance, add eps, rsqrt, normalise."""
    mean = t.mean(x, axes, step=N_("mean"), over=over, **_named(of, "mean", r"\mu"))
    xc = t.sub(x, mean, step=N_("centre"), over=over, **_named(of, "xc", "x_c"))
    sq = t.square(xc, step=N_("square"), **_named(of, "xc2", "q"))
    var = t.mean(sq, axes, step=N_("variance"), over=over, **_named(of, "var", r"\sigma^2"))
    var_eps = t.add_constant(var, eps, "eps", step=N_("add eps"), ctex=r"\epsilon", **_named(of, "var_eps", "v"))
    rstd = t.rsqrt(var_eps, step=N_("rsqrt"), **_named(of, "rstd", "r"))
    return t.mul(xc, rstd, name, N_("normalise"), tex, over_b=over)


def rms_tape(x, gamma, eps, axes, over, over_params):
    """square, mean, add eps, rsqrt, normalise, scale (RMSNorm: no centring, no beta)."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    x_hat = _rms_normalize(t, x, eps, axes, over, "x_hat", r"\hat{x}")
    _affine(t, x_hat, g, None, over_params)
    return t


def _rms_normalize(t, x, eps, axes, over, name, tex, of=""):
    """RMSNorm's nodes before its scale: square, mean square, add eps, rsqrt, normalise."""
    sq = t.square(x, step=N_("square"), **_named(of, "x2", "q"))
    ms = t.mean(sq, axes, step=N_("mean square"), over=over, **_named(of, "ms", "m"))
    ms_eps = t.add_constant(ms, eps, "eps", step=N_("add eps"), ctex=r"\epsilon", **_named(of, "ms_eps", "v"))
    rrms = t.rsqrt(ms_eps, step=N_("rsqrt"), **_named(of, "rrms", "r"))
    return t.mul(x, rrms, name, "normalise", tex, over_b=over)


def dyt_tape(x, alpha, gamma, beta, over_all, over_params):
    """scale by alpha, tanh, scale, shift (DyT: no statistics, every step element by element)."""
    t = Tape()
    x = t.leaf("x", x)
    a = t.leaf("alpha", alpha, r"\alpha")
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    u = t.mul(a, x, "u", N_("scale by alpha"), "u", over_a=over_all)  # alpha: one number for all
    th = t.tanh(u, "t", N_("tanh"), "t")
    _affine(t, th, g, b, over_params)
    return t


def grouped_tape(x, gamma, beta, eps, grouped, over_params):
    """GroupNorm and InstanceNorm: reshape (N, C, *S) to (N, G, K) with K = C/G * S values per
    group, standardise each group as LayerNorm does over K, reshape back, then the per-channel
    scale and shift."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    xg = t.reshape(x, grouped, "xg", N_("group"), "x_g")
    xg_hat = _standardize(t, xg, eps, (2,), "K", "xg_hat", r"\hat{x}_g")
    x_hat = t.reshape(xg_hat, x.value.shape, "x_hat", N_("ungroup"), r"\hat{x}")
    _affine(t, x_hat, g, b, over_params)
    return t


def dropout_tape(x, mask, p):
    """mask, then scale: y = x * mask * 1/(1-p), with a fixed mask (training mode)."""
    t = Tape()
    x = t.leaf("x", x)
    kept = t.scale(x, mask.astype(np.float64), "mask", "kept", N_("mask"), "k", "m", constant_first=False)
    t.scale(kept, 1.0 / (1.0 - p), "1/(1-p)", "y", N_("scale"), "y", r"\tfrac{1}{1-p}", constant_first=False)
    return t


def softmax_tape(s, axis, over):
    """max, shift, exp, sum, reciprocal, normalise: p = exp(s - max) / sum(exp(s - max))."""
    t = Tape()
    softmax_nodes(t, t.leaf("s", s), axis, over)
    return t


def softmax_nodes(t, s, axis, over):
    """Softmax's nodes appended to tape ``t`` after its node ``s`` (attention's scores too);
    returns the node p."""
    _z, e, total = _shifted_exp_sum(t, s, axis, over)
    rtotal = t.reciprocal(total, "rtotal", N_("reciprocal"), "R")
    return t.mul(e, rtotal, "p", N_("normalise"), "p", over_b=over)


def _shifted_exp_sum(t, s, axis, over):
    """The start softmax and log-softmax share, appended after node ``s``: max, shift, exp, sum
    (z = s - max, e = exp(z), total = sum(e)); returns those three nodes."""
    m = t.max(s, (axis,), "m", N_("max"), over, "m")
    z = t.sub(s, m, "z", N_("shift"), "z", over=over)
    e = t.exp(z, "e", N_("exp"), "e")
    return z, e, t.sum(e, (axis,), "total", N_("sum"), over, "S")


def log_softmax_tape(s, axis, over):
    """max, shift, exp, sum, log, subtract: logp = z - log(sum(exp(z))), never log(softmax)."""
    t = Tape()
    z, _e, total = _shifted_exp_sum(t, t.leaf("s", s), axis, over)
    lse = t.log(total, "lse", N_("log"), r"\ell")
    t.sub(z, lse, "logp", N_("subtract"), r"\log p", over=over)
    return t


def cross_entropy_tape(s, target, over):
    """log-softmax over the classes, pick each row's target, negate, mean over the rows:
    loss = mean_N(-logp[n, y_n])."""
    t = log_softmax_tape(s, 1, over)
    picked = t.pick(t["logp"], target, "picked", N_("pick target"), "q")
    nll = t.scale(picked, -1.0, "-1", "nll", N_("negate"), "n", "-1")
    t.mean(nll, (0,), "loss", N_("mean"), "N", "L")
    return t


GELU_K, GELU_C = float(GELU.k), float(GELU.c)  # the tanh form's sqrt(2 / pi) and 0.044715


def gelu_tape(x, approximate="none"):
    """GELU, y = x * Phi(x): exact, Phi = 0.5 * (1 + erf(x / sqrt(2))) (scale, erf, add 1,
    halve, gate), or approximate="tanh", 0.5 * (1 + tanh(k * (x + c * x**3))) (cube, scale by
    c, add, scale by k, tanh, add 1, halve, gate)."""
    t = Tape()
    x = t.leaf("x", x)
    if approximate == "tanh":
        x3 = t.cube(x, "x3", N_("cube"), "q")
        cx3 = t.scale(x3, GELU_C, "c", "cx3", N_("scale by c"), "b", "c")
        w = t.add(x, cx3, "w", N_("add"), "w")
        u = t.scale(w, GELU_K, "k", "u", N_("scale by k"), "u", "k")
        s, half = t.tanh(u, "t", N_("tanh"), "t"), ("h", "h")
    else:
        u = t.scale(x, 1.0 / np.sqrt(2.0), "1/sqrt(2)", "u", N_("scale"), "u", r"\tfrac{1}{\sqrt{2}}")
        s, half = t.erf(u, "e", N_("erf"), "E"), ("Phi", r"\Phi")  # E: not Euler's e in e^{-u^2}
    s1 = t.add_constant(s, 1.0, "1", f"{s.name}1", N_("add 1"), f"{s.tex}_1")
    gate = t.scale(s1, 0.5, "0.5", half[0], N_("halve"), half[1])
    t.mul(x, gate, "y", N_("gate"), "y")
    return t


# --- the five step-throughs ------------------------------------------------------------------
def _letters(kind, ndim):
    """A letter per axis for the text: (N, C, L) for BatchNorm, (N, D) or (B, T, D) otherwise."""
    if kind == "batchnorm":
        return ("N", "C", "H", "W")[:ndim] if ndim == 4 else ("N", "C", "L")[:ndim]
    if kind in GROUPED:  # InstanceNorm's rank 2 is one unbatched sample (C, L)
        return {2: ("C", "L") if kind == "instancenorm" else ("N", "C"), 3: ("N", "C", "L"),
                4: ("N", "C", "H", "W")}[ndim]
    return {1: ("D",), 2: ("N", "D"), 3: ("B", "T", "D"), 4: ("A", "B", "T", "D")}[ndim]


KINDS = {
    # kind: (title, allowed ranks)
    "batchnorm": ("BatchNorm", (2, 3, 4)),
    "layernorm": ("LayerNorm", (1, 2, 3, 4)),
    "rmsnorm": ("RMSNorm", (1, 2, 3, 4)),
    "dyt": ("DyT", (1, 2, 3, 4)),
    "groupnorm": ("GroupNorm", (2, 3, 4)),
    "instancenorm": ("InstanceNorm", (2, 3, 4)),
    "dropout": ("Dropout", (1, 2, 3, 4)),
    "softmax": ("softmax", (1, 2, 3, 4)),
    "log_softmax": (N_("log-softmax"), (1, 2, 3, 4)),
    "cross_entropy": (N_("cross-entropy"), (2,)),
    "gelu": ("GELU", (1, 2, 3, 4)),
    "gelu_tanh": ("GELU (tanh)", (1, 2, 3, 4)),
    "residual": (N_("residual block"), (2, 3)),  # one sub-layer, x (T, D) or (B, T, D): blocks.py
    "attention": ("self-attention", (2, 3)),  # x (T, D) or (B, T, D)
    "qk_norm": ("QK-norm", (2, 3, 4)),  # q of shape (T, D), (H, T, D) or (B, H, T, D): modern.py
    "sync_batchnorm": ("SyncBatchNorm", (2, 3, 4)),  # the whole batch, split over the ranks: modern.py
    "linear": ("Linear", (2, 3, 4)),  # x (*, D) @ W (D, D + 1) + b: layers.py, as the four below
    "relu": ("ReLU", (1, 2, 3, 4)),
    "sigmoid": ("Sigmoid", (1, 2, 3, 4)),
    "tanh": ("Tanh", (1, 2, 3, 4)),
    "mse": ("MSELoss", (1, 2, 3, 4)),
    "feedforward": ("FeedForward", (2, 3, 4)),  # Linear(D, 2D), ReLU, Linear(2D, D)
    "embedding": ("Embedding", (2,)),  # x is the table (V, D), looked up at V + 1 ids
}

GROUPED_DX = "dx = reshape(rstd * (dx_hat - mean_K(dx_hat) - x_hat * mean_K(dx_hat * x_hat)))"
COMPACT = {
    "batchnorm": "dx = rstd * (dx_hat - mean_N(dx_hat) - x_hat * mean_N(dx_hat * x_hat)),"
                 " dx_hat = dy * gamma",
    "layernorm": "dx = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat)),"
                 " dx_hat = dy * gamma",
    "rmsnorm": "dx = rrms * (dx_hat - x_hat * mean_D(dx_hat * x_hat)), dx_hat = dy * gamma",
    "dyt": "dx = alpha * du, du = dy * gamma * (1 - t**2); dalpha = sum_all(du * x)",
    "groupnorm": Phrase(N_("{dx}, on the groups (N, G, K), {dx_hat}"), dx=GROUPED_DX, dx_hat="dx_hat = dy * gamma"),
    "instancenorm": Phrase(N_("{dx}, on the instances (N, C, K), {dx_hat}"), dx=GROUPED_DX,
                           dx_hat="dx_hat = dy * gamma"),
    "dropout": Phrase(N_("{dx}: the same mask as the forward"), dx="dx = dy * mask / (1 - p)"),
    "softmax": "ds = p * (dp - sum_D(dp * p)), dp = dL/dp",
    "log_softmax": "ds = dlogp - p * sum_D(dlogp), p = exp(logp) = softmax(s)",
    "cross_entropy": Phrase(N_("{ds}: the fused gradient, no log-softmax Jacobian"),
                            ds="ds = dloss * (softmax(s) - onehot(y)) / N"),
    "gelu": "dx = dy * (Phi + x * phi), phi = exp(-x**2 / 2) / sqrt(2 pi)",
    "gelu_tanh": "dx = dy * (h + x / 2 * (1 - t**2) * k * (1 + 3 c x**2)), h = (1 + t) / 2",
    "residual": {  # one formula per norm position, G'(g) = G's backward of g, f'(g) = g @ W.T
        "pre": Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + LN'(f'(dy))"),
        "post": Phrase(N_("{dx}: the identity path carries dz, not dy"),
                       dx="dz = LN'(dy); dx = dz + f'(dz)"),
        "deepnorm": "dz = LN'(dy); dx = alpha * dz + f'(dz)",
        "peri": Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + LN'(f'(LN_f'(dy)))"),
        "none": "dx = dy + f'(dy)"},
    "attention": "do = dy Wo^T; dp = do v^T, dv = p^T do; ds = p * (dp - sum_j(dp * p)); "
                 "dq = ds k / sqrt(d_k), dk = ds^T q / sqrt(d_k); dx = dq Wq^T + dk Wk^T + dv Wv^T",
    "qk_norm": Phrase(N_("{dq}: each norm's own compact backward, {y}"),
                      dq="dq = q_norm.backward(ds @ y_k / sqrt(D)), dk = k_norm.backward(ds^T @ y_q / sqrt(D))",
                      y="y_q = q_norm(q), y_k = k_norm(k)"),
    "sync_batchnorm": Phrase(N_("{dx}; both means over every rank, from one all-reduce of {sums}"),
                             dx="dx_r = rstd * (dx_hat_r - mean_N(dx_hat) - x_hat_r * mean_N(dx_hat * x_hat)),"
                                " dx_hat = dy * gamma", sums="[sum dy_r, sum dy_r * x_hat_r]"),
    "linear": Phrase(N_("{dx}, {dw} (summed over the rows), {db}"), dx="dx = dy @ W^T",
                     dw="dW = x^T @ dy", db="db = sum_rows(dy)"),
    "relu": "dx = dy * [x > 0]",
    "sigmoid": "dx = dy * y * (1 - y)",
    "tanh": "dx = dy * (1 - y**2)",
    "mse": "dpred = dloss * 2 * (pred - target) / N",
    "feedforward": "dh = dy @ W2^T; da = dh * [a > 0]; dx = da @ W1^T; dW2 = h^T @ dy, dW1 = x^T @ da",
    "embedding": Phrase(N_("{dw}: each position's dy added into its id's row, a repeated id's adding up"),
                        dw="dW = 0; np.add.at(dW, idx, dy)"),
}

# options that only some step-throughs take (any other refuses them)
OPTION_KINDS = {"position": ("residual",), "groups": ("groupnorm",), "p": ("dropout",), "alpha": ("dyt",),
                "heads": ("attention",), "target": ("cross_entropy",), "qk_norm": ("qk_norm",),
                "ranks": ("sync_batchnorm",)}


GROUPED = ("groupnorm", "instancenorm")  # LayerNorm's arithmetic on a reshape (N, G, K)
DROPOUT_P = 0.5  # dropout's default probability of dropping an element


def _kind(kind):
    squash = lambda k: str(k).lower().replace("-", "").replace("_", "")  # noqa: E731
    for key in KINDS:  # "log_softmax", "log-softmax" and "logsoftmax" all name log_softmax
        if squash(key) == squash(kind):
            return key
    raise ValueError(_("unknown step-through {kind!r}; choose one of {kinds}").format(
        kind=kind, kinds=", ".join(KINDS)))


def _verdict(node, against, staged, reference, tol, atol=0.0):
    staged = np.asarray(staged, dtype=np.float64).ravel()
    reference = np.asarray(reference, dtype=np.float64).ravel()
    diff = float(np.max(np.abs(staged - reference))) if staged.size else 0.0
    err = rel_error(staged, reference)
    verdict = "exact" if diff == 0 else "close" if err <= tol or diff <= atol else "DIFFERS"
    return GradientComparison(node, against, diff, err, verdict)


def step_through(kind, x=None, *, shape=(3, 4), seed=0, gamma=None, beta=None, dy=None, causal=False, h=1e-6,
                 alpha=None, groups=None, p=None, target=None, position=None, heads=None, qk_norm=None,
                 ranks=None):
    """Build the tape of ``kind`` (one of ``KINDS``), run its backward and check it; returns a
    ``StepThrough``.

    x : the input (default: random of ``shape``, mean about 1, spread about 2, from ``seed``).
        BatchNorm takes (N, C), (N, C, L) or (N, C, H, W) and normalises each channel over the
        other axes; LayerNorm and RMSNorm normalise over the last axis; softmax runs over it;
        DyT works element by element, with gamma and beta over the last axis. Log-softmax runs
        over the last axis, cross_entropy takes (N, C) logits, GELU works element by element.
        Linear takes (*, D) into Linear(D, D + 1), FeedForward (*, D) through Linear(D, 2D),
        ReLU and Linear(2D, D); ReLU, Sigmoid and Tanh work element by element; mse compares
        x with a random target of its shape; embedding's x is the table (V, D), looked up at
        V + 1 random ids (so one repeats). See ``derivations.layers``.
    gamma, beta : the layer's parameters (default: random, from ``seed``; never 1 and 0, which
        would hide mistakes in their gradients).
    alpha : DyT's scalar alpha (default: random, from ``seed``); one number for every
        element, so its gradient sums over all of them.
    dy : the upstream gradient dL/dy (default: random);
        the loss is L = sum(y * dy).
    causal : softmax only: set the scores above the diagonal of the last two (square) axes to
        -inf, as attention's causal mask does (query i may not look at key j > i).
    groups : GroupNorm's G (default 2 when C is even and a group keeps 3 values or more, else
        1). GroupNorm takes (N, C, *S), InstanceNorm (N, C, L), (N, C, H, W) or one unbatched
        sample (C, L); both standardise each group of values K = C/G * S as LayerNorm does.
    p : dropout's probability of dropping an element (default 0.5); the mask is drawn once,
        from ``seed``, and the layer (in training mode) draws the same one.
    target : cross_entropy only: the class index of each row of the (N, C) logits (default:
        random, from ``seed``). The loss is the output, so dy is a scalar (default 1).
    position : residual only: where its LayerNorm sits, "pre" (default), "post", "deepnorm",
        "peri" or "none", as in ``TransformerBlock``; x is (T, D) or (B, T, D) and the sub-layer
        a Linear(D, D) (``normcore.derivations.blocks``).
    heads : attention only (default 1): self-attention on x (T, D) or (B, T, D) with ``heads``
        heads, which must divide D; ``causal`` masks the future. See ``derivations.attention``.
    qk_norm : the qk_norm step-through's norm, "rmsnorm" (default) or "layernorm"; x is q, of
        shape (T, D), (H, T, D) or (B, H, T, D), k is drawn like it, the output is the scores.
    ranks : the sync_batchnorm step-through's simulated ranks (default 2); x is the whole batch,
        split along N (the first ranks hold one row more when N is not a multiple).
    """
    kind = _kind(kind)
    title, ndims = KINDS[kind]
    options = dict(position=position, groups=groups, p=p, alpha=alpha, heads=heads, target=target,
                   qk_norm=qk_norm, ranks=ranks)
    for option, value in options.items():
        if value is not None and kind not in OPTION_KINDS[option]:
            raise ValueError(_("{option} applies to the {kinds} step-through only, got {title}").format(
                option=option, kinds=_(" and ").join(_(KINDS[k][0]) for k in OPTION_KINDS[option]),
                title=_(title)))
    if kind == "attention":  # its own module: projections, heads, softmax
        from .attention import attention_step_through
        return attention_step_through(x, shape=shape, seed=seed, dy=dy, causal=causal, heads=heads, h=h,
                                      unused=dict(gamma=gamma, beta=beta))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(tuple(shape)) * 2.0 + 1.0 if x is None else np.array(x, dtype=np.float64)
    if x.ndim not in ndims:
        raise ValueError(_("the {title} step-through takes an input of rank {ranks}, got shape {shape}").format(
            title=title, ranks=_(" or ").join(map(str, ndims)), shape=x.shape))
    if flag(causal, "causal", "step_through"):
        if kind != "softmax" or x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(_("causal=True needs the softmax step-through and square last two axes "
                               "(attention scores T x T), got {title} on shape {shape}").format(
                title=title, shape=x.shape))
        above = np.triu_indices(x.shape[-1], 1)
        x[..., above[0], above[1]] = -np.inf
    if kind == "residual":
        from .blocks import residual_step_through  # blocks.py builds on this module's tapes
        return residual_step_through(x, rng, dy, h, position, gamma, beta)
    if kind in ("qk_norm", "sync_batchnorm"):  # normcore/derivations/modern.py
        from .modern import modern_step_through
        return modern_step_through(kind, title, x, rng, gamma=gamma, beta=beta, dy=dy, h=h, qk_norm=qk_norm,
                                   ranks=ranks)
    if kind in LOSS_AND_ACTIVATION_KINDS:
        return _loss_or_activation_step_through(kind, title, x, rng, dy, target, h)
    from .layers import LAYER_KINDS, layer_step_through  # layers.py builds on this module's tapes
    if kind in LAYER_KINDS:
        return layer_step_through(kind, title, x, rng, dy, h, gamma, beta)
    letters = _letters(kind, x.ndim)
    if kind == "batchnorm":
        if x.size // x.shape[1] < 2:
            raise ValueError(_("BatchNorm needs more than one value per channel, got input of shape {shape}")
                             .format(shape=x.shape))
        axes = (0,) + tuple(range(2, x.ndim))
        layer = (norms.BatchNorm1d if x.ndim < 4 else norms.BatchNorm2d)(x.shape[1])
        view = (x.shape[1],) if x.ndim == 2 else (1, x.shape[1]) + (1,) * (x.ndim - 2)
    elif kind == "softmax":
        axes, layer = (x.ndim - 1,), Softmax(axis=-1)
    elif kind in GROUPED:
        layer, grouped, c_axis = _grouped_layer(kind, x, groups)
        axes = tuple(a for a in range(x.ndim) if a != c_axis)  # gamma and beta are shared along these
        channels = x.shape[c_axis]
        view = (channels,) if c_axis == x.ndim - 1 else (1,) * c_axis + (channels,) + (1,) * (x.ndim - c_axis - 1)
    elif kind == "dropout":
        p = DROPOUT_P if p is None else real_number(p, "p", "step_through")
        if not 0.0 <= p < 1.0:
            raise ValueError(_("dropout's p must be at least 0 and below 1 (p = 1 drops every element), got {p}")
                             .format(p=p))
        axes = tuple(range(x.ndim))
    else:
        axes = (x.ndim - 1,)
        layer = {"layernorm": norms.LayerNorm, "rmsnorm": norms.RMSNorm, "dyt": norms.DyT}[kind](x.shape[-1])
        view = (x.shape[-1],)
    over = ",".join(letters[a] for a in axes)
    # gamma and beta are shared along the statistics' axes (BatchNorm) or the leading axes
    param_axes = axes if kind in ("batchnorm",) + GROUPED else range(x.ndim - 1)
    over_params = ",".join(letters[a] for a in param_axes) or None

    if kind not in ("softmax", "dropout"):
        randomize_parameters(layer, rng)
        if gamma is not None:
            layer.weight.data[...] = np.asarray(gamma, dtype=np.float64).reshape(layer.weight.shape)
        if beta is not None and layer.bias is not None:
            layer.bias.data[...] = np.asarray(beta, dtype=np.float64).reshape(layer.bias.shape)
        if alpha is not None and kind == "dyt":
            layer.alpha.data[...] = np.asarray(alpha, dtype=np.float64).reshape(1)
    dy = rng.standard_normal(x.shape) if dy is None else np.asarray(dy, dtype=np.float64)
    if dy.shape != x.shape:
        raise ValueError(_("dy must have the input's shape {shape}, got {got}").format(shape=x.shape, got=dy.shape))

    detail, mask = "", None
    if kind == "softmax":
        eps = 0.0
        tape = softmax_tape(x, axes[0], over)
    elif kind == "dropout":
        mask_seed = int(rng.integers(2 ** 31))  # the layer draws its mask from the same seed
        mask = np.random.default_rng(mask_seed).random(x.shape) >= p
        layer = Dropout(p, rng=mask_seed)
        eps, over = 0.0, ",".join(letters)
        detail = Phrase(N_("training mode, p = {p}: a fixed mask keeps {kept} of {size} elements, "
                           "scaled by 1/(1-p) = {scale}"),
                        p=f"{p:g}", kept=int(mask.sum()), size=mask.size, scale=f"{1 / (1 - p):.4g}")
        tape = dropout_tape(x, mask, p)
    elif kind in GROUPED:
        eps, over = layer.eps, "K"
        detail = Phrase(N_("reshaped to {shape}, statistics over K = {k} values per group, eps = {eps}")
                        if kind == "groupnorm" else
                        N_("reshaped to {shape}, statistics over K = {k} values per instance, eps = {eps}"),
                        shape=grouped, k=grouped[2], eps=f"{eps:.3g}")
        tape = grouped_tape(x, layer.weight.data.reshape(view), layer.bias.data.reshape(view), eps,
                            grouped, over_params)
    elif kind == "dyt":
        eps, over = 0.0, ",".join(letters)  # no statistics: alpha's gradient sums over every axis
        tape = dyt_tape(x, layer.alpha.data, layer.weight.data.reshape(view), layer.bias.data.reshape(view),
                        over, over_params)
    else:
        eps = layer_eps(layer)
        gamma_v = layer.weight.data.reshape(view)
        if kind == "rmsnorm":
            tape = rms_tape(x, gamma_v, eps, axes, over, over_params)
        else:
            tape = standardize_tape(x, gamma_v, layer.bias.data.reshape(view), eps, axes, over, over_params)
    # the reference: the layer's own forward and compact backward
    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {tape.nodes[0].name: layer.backward(dy)}
    reference.update({{"alpha": "alpha", "weight": "gamma", "bias": "beta"}[n]: p.grad
                      for n, p in layer.named_parameters()})
    reference_name = f"{type(layer).__name__}.backward"

    st = StepThrough(kind, title, tape, dy, eps, over, reference_name, COMPACT[kind], what=detail, mask=mask)
    _check(st, y_ref, reference, h)
    st.properties = _properties(kind, tape, axes, over, mask, p)
    return st


def layer_eps(layer):
    """The eps a norm layer adds: its own, or machine epsilon for RMSNorm(eps=None)."""
    return layer.eps if layer.eps is not None else float(np.finfo(np.float64).eps)


def _check(st, y_ref, reference, h):
    """Run the tape's backward from ``st.dy``, then compare: the output with the layer's forward
    ``y_ref``, the gradients named in ``reference`` with the layer's backward, and every node's
    gradient with central differences."""
    tape, dy = st.tape, st.dy
    tape.backward(dy)
    st.checks.append(_verdict(tape.output.name, "compact", tape.output.value, y_ref, COMPACT_TOL, COMPACT_ATOL))
    for name, grad in reference.items():
        st.checks.append(_verdict(name, "compact", tape[name].grad, grad, COMPACT_TOL, COMPACT_ATOL))
    # L's own rounding, magnified by the differences' 1/h: where a gradient is about 0 (softmax's
    # max), a numerical one this small is noise (attention's L adds hundreds of terms of order 1)
    noise = 4 * np.finfo(np.float64).eps * float(np.sum(np.abs(tape.output.value * dy))) / h
    for node in tape:
        st.checks.append(_verdict(node.name, "numerical", node.grad, tape.numerical_grad(node, dy, h),
                                  NUMERICAL_TOL, max(NUMERICAL_ATOL, noise)))


def _grouped_layer(kind, x, groups):
    """GroupNorm's or InstanceNorm's layer for x, the grouped shape (N, G, K) and the channel axis."""
    c_axis = 0 if kind == "instancenorm" and x.ndim == 2 else 1  # (C, L): one unbatched sample
    n, channels = (1 if c_axis == 0 else x.shape[0]), x.shape[c_axis]
    spatial = x.size // (n * channels)
    if kind == "instancenorm":  # one group per channel
        layer = (norms.InstanceNorm1d if x.ndim < 4 else norms.InstanceNorm2d)(channels, affine=True)
        groups = channels
    else:
        if groups is None:
            groups = 2 if channels % 2 == 0 and channels // 2 * spatial >= 3 else 1  # K = 2: x_hat = +-1
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1 \
                or channels % groups:
            raise ValueError(_("groups must divide the {channels} channels of shape {shape}, got {groups}").format(
                channels=channels, shape=x.shape, groups=groups))
        layer = norms.GroupNorm(int(groups), channels)
    grouped = (n, int(groups), channels // groups * spatial)
    if grouped[2] < 2:
        raise ValueError(_("the {title} step-through needs more than one value per group (C/G * spatial "
                           "positions), got input of shape {shape} with G = {groups}").format(
            title=KINDS[kind][0], shape=x.shape, groups=groups))
    return layer, grouped, c_axis


def _properties(kind, tape, axes, over, mask=None, p=None):
    """What the input gradient must satisfy, measured: each value should be 0 up to rounding."""
    first = tape.nodes[0]
    dx = first.grad
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    if kind == "softmax":
        return [(Phrase(N_("{sum}: softmax ignores a shift of its row"), sum=f"sum_{over}(ds)"),
                 worst(dx.sum(axis=axes)))]
    if kind == "dyt":  # no reduction: nothing sums to zero, but each dx is its own x's business
        t, alpha = tape["t"].value, tape["alpha"].value
        return [(Phrase(N_("{diff}: element by element, no term mixing elements"),
                        diff="dx - alpha * gamma * (1 - t**2) * dy"),
                 worst(dx - alpha * tape["gamma"].value * (1 - t * t) * tape.output.grad)),
                (Phrase(N_("{diff}: alpha scales x, so its gradient is dx's against x"),
                        diff="dalpha - sum(dx * x) / alpha"),
                 worst(tape["alpha"].grad - np.sum(dx * first.value) / alpha))]
    if kind == "dropout":
        dy = tape.output.grad
        return [(Phrase(N_("dx where the mask dropped x: no gradient reaches a dropped element")),
                 worst(dx[~mask]) if (~mask).any() else 0.0),
                (Phrase(N_("{diff}: dy passes through the forward's mask"), diff="dx - dy * mask / (1-p)"),
                 worst(dx - dy * mask / (1.0 - p)))]
    if kind in GROUPED:  # the properties hold per group, on the reshape (N, G, K)
        dx, x_hat, axes = dx.reshape(tape["xg"].value.shape), tape["xg_hat"].value, (2,)
    else:
        x_hat = tape["x_hat"].value
    props = [(Phrase(N_("{sum}: the output ignores a rescaling of x (up to eps)"), sum=f"sum_{over}(dx * x_hat)"),
              worst(np.sum(dx * x_hat, axis=axes)))]
    if kind != "rmsnorm":
        props.insert(0, (Phrase(N_("{sum}: the output ignores a shift of x"), sum=f"sum_{over}(dx)"),
                         worst(dx.sum(axis=axes))))
    return props


# --- log-softmax, cross-entropy and GELU: no parameters, checked against normcore.nn ----------
LOSS_AND_ACTIVATION_KINDS = ("log_softmax", "cross_entropy", "gelu", "gelu_tanh")


def _class_targets(target, rng, n, c):
    """Cross-entropy's class indices: one integer in [0, c) per row (default: random)."""
    if target is None:
        return rng.integers(0, c, size=n)
    y = np.asarray(target)
    if y.shape != (n,) or y.dtype.kind not in "iu" or (y.size and (y.min() < 0 or y.max() >= c)):
        raise ValueError(_("target must hold one class index in [0, {c}) per row of the logits, shape ({n},), "
                           "got {dtype} of shape {shape}").format(c=c, n=n, dtype=y.dtype, shape=y.shape))
    return y


def scalar_upstream(dy, kind, shape):
    """A loss's upstream gradient dL/dloss: one number (default 1), in the loss node's ``shape``."""
    dy = np.ones(shape) if dy is None else np.asarray(dy, dtype=np.float64)
    if dy.size != 1:
        raise ValueError(_("dy must be one number for {kind} (the loss is a scalar), got shape {shape}")
                         .format(kind=kind, shape=dy.shape))
    return dy.reshape(shape)


def _loss_or_activation_step_through(kind, title, x, rng, dy, target, h):
    """The tape of log-softmax, cross-entropy or GELU, checked against normcore.nn's layer."""
    if kind == "cross_entropy":
        n, c = x.shape
        target = _class_targets(target, rng, n, c)
        tape, layer, over = cross_entropy_tape(x, target, "C"), CrossEntropyLoss(), "C"
        y_ref = layer.forward(x, target)
        dy = scalar_upstream(dy, kind, (1, 1))
        dx = layer.backward(dy[0, 0])
        what = Phrase(N_("mean over the N = {n} rows of -log-softmax at the target, over the C = {c} classes"),
                      n=n, c=c)
        loss_line = Phrase(N_("The output is the loss itself: L = loss, so dL/dloss = dy = {dy}."),
                           dy=f"{dy[0, 0]:g}")
        notes = [Phrase(N_("Targets y (one class per row): {targets}"), targets=target.tolist())]
    else:
        over = _letters(kind, x.ndim)[-1]
        dy = rng.standard_normal(x.shape) if dy is None else np.asarray(dy, dtype=np.float64)
        if dy.shape != x.shape:
            raise ValueError(_("dy must have the input's shape {shape}, got {got}").format(shape=x.shape, got=dy.shape))
        if kind == "log_softmax":
            tape, layer = log_softmax_tape(x, x.ndim - 1, over), LogSoftmax(axis=-1)
            what = Phrase(N_("log-softmax over {over}"), over=over)
        else:
            approximate = "tanh" if kind == "gelu_tanh" else "none"
            tape, layer = gelu_tape(x, approximate), GELU(approximate=approximate)
            what = Phrase(N_("element by element, no statistics"))
        y_ref = layer.forward(x)
        dx = layer.backward(dy)
        loss_line, notes = "", []
    reference = {tape.nodes[0].name: dx}
    st = StepThrough(kind, title, tape, dy, 0.0, over, f"{type(layer).__name__}.backward", COMPACT[kind],
                     what=what, loss_line=loss_line, notes=notes, target=target)
    _check(st, y_ref, reference, h)
    st.properties = _loss_or_activation_properties(kind, tape, over, target)
    return st


def _loss_or_activation_properties(kind, tape, over, target=None):
    """What the input gradient must satisfy, measured: each value should be 0 up to rounding."""
    first = tape.nodes[0]
    dx, x = first.grad, first.value
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    if kind == "log_softmax":
        return [(Phrase(N_("{sum}: log-softmax ignores a shift of its row"), sum=f"sum_{over}(ds)"),
                 worst(dx.sum(axis=-1)))]
    if kind == "cross_entropy":
        p = np.exp(tape["logp"].value)
        onehot = np.zeros_like(p)
        onehot[np.arange(len(p)), target] = 1.0
        fused = tape.output.grad[0, 0] * (p - onehot) / len(p)
        return [(Phrase(N_("{diff}: the staged gradient is the fused one"),
                        diff="ds - dloss * (softmax(s) - onehot(y)) / N"), worst(dx - fused)),
                (Phrase(N_("{sum}: each row's gradient sums to 0"), sum=f"sum_{over}(ds)"),
                 worst(dx.sum(axis=1)))]
    dy = tape.output.grad
    if kind == "gelu":
        phi = np.exp(-x * x / 2) / np.sqrt(2 * np.pi)
        return [(Phrase(N_("{diff}: the product rule, element by element"), diff="dx - dy * (Phi + x * phi)"),
                 worst(dx - dy * (tape["Phi"].value + x * phi)))]
    t = tape["t"].value
    return [(Phrase(N_("{diff}: the product rule, element by element"),
                    diff="dx - dy * (h + x / 2 * (1 - t**2) * k * (1 + 3 c x**2))"),
             worst(dx - dy * (tape["h"].value + x / 2 * (1 - t * t) * GELU_K * (1 + 3 * GELU_C * x * x))))]
