"""The core every step-through family builds on: the ``StepThrough`` record, its checks against
the layer's compact backward and central differences, and the tape fragments several families
share (a norm's standardisation, its scale and shift, softmax's nodes). The tape itself, its
nodes and their rules are in ``tape.py``; the kinds and their builders in the family modules
(see ``registry.py``).
"""

from dataclasses import dataclass, field

import numpy as np

from ..gradcheck import rel_error
from ..i18n import N_, translator
from .tape import Tape

_ = translator("explain")

COMPACT_TOL = 1e-10  # staged vs compact: the same arithmetic in another order, rounding only:
COMPACT_ATOL = 1e-13  # relative error, or absolute difference where the gradient is about 0
NUMERICAL_TOL = 1e-6  # staged vs central differences with h = 1e-6: relative error, or
NUMERICAL_ATOL = 1e-8  # absolute difference where the gradient itself is about 0 (softmax's max)

GROUPED = ("groupnorm", "instancenorm")  # LayerNorm's arithmetic on a reshape (N, G, K)


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


# --- the checks ------------------------------------------------------------------------------
def verdict(node, against, staged, reference, tol, atol=0.0):
    """A ``GradientComparison`` of ``staged`` with ``reference``: exact, close (within the
    relative ``tol`` or the absolute ``atol``) or DIFFERS."""
    staged = np.asarray(staged, dtype=np.float64).ravel()
    reference = np.asarray(reference, dtype=np.float64).ravel()
    diff = float(np.max(np.abs(staged - reference))) if staged.size else 0.0
    err = rel_error(staged, reference)
    said = "exact" if diff == 0 else "close" if err <= tol or diff <= atol else "DIFFERS"
    return GradientComparison(node, against, diff, err, said)


def check(st, y_ref, reference, h):
    """Run the tape's backward from ``st.dy``, then compare: the output with the layer's forward
    ``y_ref``, the gradients named in ``reference`` with the layer's backward, and every node's
    gradient with central differences."""
    tape, dy = st.tape, st.dy
    tape.backward(dy)
    st.checks.append(verdict(tape.output.name, "compact", tape.output.value, y_ref, COMPACT_TOL, COMPACT_ATOL))
    for name, grad in reference.items():
        st.checks.append(verdict(name, "compact", tape[name].grad, grad, COMPACT_TOL, COMPACT_ATOL))
    # L's own rounding, magnified by the differences' 1/h: where a gradient is about 0 (softmax's
    # max), a numerical one this small is noise (attention's L adds hundreds of terms of order 1)
    noise = 4 * np.finfo(np.float64).eps * float(np.sum(np.abs(tape.output.value * dy))) / h
    for node in tape:
        st.checks.append(verdict(node.name, "numerical", node.grad, tape.numerical_grad(node, dy, h),
                                 NUMERICAL_TOL, max(NUMERICAL_ATOL, noise)))


def upstream(dy, rng, shape):
    """The upstream gradient dL/d(output): random of ``shape`` by default, else checked."""
    dy = rng.standard_normal(shape) if dy is None else np.asarray(dy, dtype=np.float64)
    if dy.shape != tuple(shape):
        raise ValueError(_("dy must have the output's shape {expected}, got {got}")
                         .format(expected=tuple(shape), got=dy.shape))
    return dy


def input_upstream(dy, rng, shape):
    """The upstream gradient of a step-through whose output has the input's ``shape``."""
    dy = rng.standard_normal(shape) if dy is None else np.asarray(dy, dtype=np.float64)
    if dy.shape != tuple(shape):
        raise ValueError(_("dy must have the input's shape {shape}, got {got}").format(shape=shape, got=dy.shape))
    return dy


def scalar_upstream(dy, kind, shape):
    """A loss's upstream gradient dL/dloss: one number (default 1), in the loss node's ``shape``."""
    dy = np.ones(shape) if dy is None else np.asarray(dy, dtype=np.float64)
    if dy.size != 1:
        raise ValueError(_("dy must be one number for {kind} (the loss is a scalar), got shape {shape}")
                         .format(kind=kind, shape=dy.shape))
    return dy.reshape(shape)


def no_gamma_beta(title, gamma, beta):
    """Raise unless ``gamma`` and ``beta`` are None: the step-through of a layer without a
    norm's gamma and beta (its parameters, if any, come from the seed)."""
    if gamma is not None or beta is not None:
        raise ValueError(_("the {title} step-through has no gamma or beta (its parameters, if any, "
                           "are drawn from the seed); leave them out").format(title=_(title)))


def layer_eps(layer):
    """The eps a norm layer adds: its own, or machine epsilon for RMSNorm(eps=None)."""
    return layer.eps if layer.eps is not None else float(np.finfo(np.float64).eps)


def letters(kind, ndim):
    """A letter per axis for the text: (N, C, L) for BatchNorm, (N, D) or (B, T, D) otherwise."""
    if kind == "batchnorm":
        return ("N", "C", "H", "W")[:ndim] if ndim == 4 else ("N", "C", "L")[:ndim]
    if kind in GROUPED:  # InstanceNorm's rank 2 is one unbatched sample (C, L)
        return {2: ("C", "L") if kind == "instancenorm" else ("N", "C"), 3: ("N", "C", "L"),
                4: ("N", "C", "H", "W")}[ndim]
    return {1: ("D",), 2: ("N", "D"), 3: ("B", "T", "D"), 4: ("A", "B", "T", "D")}[ndim]


# --- tape fragments several families share ---------------------------------------------------
def named(of, name, tex):
    r"""A node's name and LaTeX symbol, marked with ``of`` for a chain that runs more than once
    on one tape (QK-norm's q and k, SyncBatchNorm's ranks): ("mean", r"\mu") of "q" is
    ("mean_q", r"\mu_{q}"), ("xc", "x_c") is ("xc_q", "x_{c,q}"); without ``of``, unchanged."""
    if not of:
        return {"name": name, "tex": tex}
    base, power = tex.split("^", 1) if "^" in tex else (tex, "")
    head, low = base.split("_", 1) if "_" in base else (base, "")
    sub = f"{low.strip('{}')},{of}" if low else of
    return {"name": f"{name}_{of}", "tex": f"{head}_{{{sub}}}" + (f"^{power}" if power else "")}


def affine(tape, x_hat, gamma, beta, over_params, of="", out=None):
    """scale then shift: y = x_hat * gamma + beta (beta may be None). ``of`` marks the nodes of a
    chain that runs more than once on a tape (see ``named``); ``out`` = (name, TeX) names the
    result otherwise (a residual block's h, y or o)."""
    last = dict(zip(("name", "tex"), out)) if out else named(of, "y", "y")
    scaled = last if beta is None else named(of, "scaled", "s")  # the scale is the last step without beta
    y = tape.mul(x_hat, gamma, step=N_("scale"), over_b=over_params, **scaled)
    if beta is not None:
        y = tape.add(y, beta, step=N_("shift"), over_b=over_params, **last)
    return y


def standardize(t, x, eps, axes, over, name, tex, of=""):
    """The standardisation nodes: mean, centre, square, variance, add eps, rsqrt, normalise."""
    mean = t.mean(x, axes, step=N_("mean"), over=over, **named(of, "mean", r"\mu"))
    xc = t.sub(x, mean, step=N_("centre"), over=over, **named(of, "xc", "x_c"))
    sq = t.square(xc, step=N_("square"), **named(of, "xc2", "q"))
    var = t.mean(sq, axes, step=N_("variance"), over=over, **named(of, "var", r"\sigma^2"))
    var_eps = t.add_constant(var, eps, "eps", step=N_("add eps"), ctex=r"\epsilon", **named(of, "var_eps", "v"))
    rstd = t.rsqrt(var_eps, step=N_("rsqrt"), **named(of, "rstd", "r"))
    return t.mul(xc, rstd, name, N_("normalise"), tex, over_b=over)


def rms_normalize(t, x, eps, axes, over, name, tex, of=""):
    """RMSNorm's nodes before its scale: square, mean square, add eps, rsqrt, normalise."""
    sq = t.square(x, step=N_("square"), **named(of, "x2", "q"))
    ms = t.mean(sq, axes, step=N_("mean square"), over=over, **named(of, "ms", "m"))
    ms_eps = t.add_constant(ms, eps, "eps", step=N_("add eps"), ctex=r"\epsilon", **named(of, "ms_eps", "v"))
    rrms = t.rsqrt(ms_eps, step=N_("rsqrt"), **named(of, "rrms", "r"))
    return t.mul(x, rrms, name, "normalise", tex, over_b=over)


def shifted_exp_sum(t, s, axis, over):
    """The start softmax and log-softmax share, appended after node ``s``: max, shift, exp, sum
    (z = s - max, e = exp(z), total = sum(e)); returns those three nodes."""
    m = t.max(s, (axis,), "m", N_("max"), over, "m")
    z = t.sub(s, m, "z", N_("shift"), "z", over=over)
    e = t.exp(z, "e", N_("exp"), "e")
    return z, e, t.sum(e, (axis,), "total", N_("sum"), over, "S")


def softmax_nodes(t, s, axis, over):
    """Softmax's nodes appended to tape ``t`` after its node ``s`` (attention's scores too);
    returns the node p."""
    _z, e, total = shifted_exp_sum(t, s, axis, over)
    rtotal = t.reciprocal(total, "rtotal", N_("reciprocal"), "R")
    return t.mul(e, rtotal, "p", N_("normalise"), "p", over_b=over)
