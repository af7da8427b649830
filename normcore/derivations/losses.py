"""Step-throughs of log-softmax, cross-entropy (ending in the scalar loss) and GELU in its erf
and tanh forms: no parameters, each checked against normcore.nn's layer and central
differences.

    st = step_through("cross_entropy", shape=(4, 3))   # logits (N, C), a random target per row
    st = step_through("gelu_tanh", shape=(3, 4))       # y = x * 0.5 * (1 + tanh(k (x + c x^3)))
"""

import numpy as np

from ..i18n import N_, translator
from ..nn import GELU, CrossEntropyLoss, LogSoftmax
from .core import StepThrough, check, input_upstream, letters, no_gamma_beta, scalar_upstream, shifted_exp_sum
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")


# --- the tapes -------------------------------------------------------------------------------
def log_softmax_tape(s, axis, over):
    """max, shift, exp, sum, log, subtract: logp = z - log(sum(exp(z))), never log(softmax)."""
    t = Tape()
    z, _e, total = shifted_exp_sum(t, t.leaf("s", s), axis, over)
    lse = t.log(total, "lse", N_("log"), r"\ell")
    t.sub(z, lse, "logp", N_("subtract"), r"\log p", over=over)
    return t


def cross_entropy_tape(s, target, over, out=("loss", "L")):
    """log-softmax over the classes, pick each row's target, negate, mean over the rows:
    loss = mean_N(-logp[n, y_n]); ``out`` names the last node (name, TeX)."""
    t = log_softmax_tape(s, 1, over)
    picked = t.pick(t["logp"], target, "picked", N_("pick target"), "q")
    nll = t.scale(picked, -1.0, "-1", "nll", N_("negate"), "n", "-1")
    t.mean(nll, (0,), out[0], N_("mean"), "N", out[1])
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


# --- the step-throughs -----------------------------------------------------------------------
LOSS_AND_ACTIVATION_KINDS = ("log_softmax", "cross_entropy", "gelu", "gelu_tanh")
COMPACT = {
    "log_softmax": "ds = dlogp - p * sum_D(dlogp), p = exp(logp) = softmax(s)",
    "cross_entropy": Phrase(N_("{ds}: the fused gradient, no log-softmax Jacobian"),
                            ds="ds = dloss * (softmax(s) - onehot(y)) / N"),
    "gelu": "dx = dy * (Phi + x * phi), phi = exp(-x**2 / 2) / sqrt(2 pi)",
    "gelu_tanh": "dx = dy * (h + x / 2 * (1 - t**2) * k * (1 + 3 c x**2)), h = (1 + t) / 2",
}


def _class_targets(target, rng, n, c):
    """Cross-entropy's class indices: one integer in [0, c) per row (default: random)."""
    if target is None:
        return rng.integers(0, c, size=n)
    y = np.asarray(target)
    if y.shape != (n,) or y.dtype.kind not in "iu" or (y.size and (y.min() < 0 or y.max() >= c)):
        raise ValueError(_("target must hold one class index in [0, {c}) per row of the logits, shape ({n},), "
                           "got {dtype} of shape {shape}").format(c=c, n=n, dtype=y.dtype, shape=y.shape))
    return y


def loss_or_activation_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, target=None):
    """The tape of log-softmax, cross-entropy or GELU, checked against normcore.nn's layer."""
    no_gamma_beta(title, gamma, beta)
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
        over = letters(kind, x.ndim)[-1]
        dy = input_upstream(dy, rng, x.shape)
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
    check(st, y_ref, reference, h)
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


# --- the kinds -------------------------------------------------------------------------------
register("log_softmax", N_("log-softmax"), (1, 2, 3, 4), loss_or_activation_step_through,
         description=N_("log-softmax over the last axis, never log(softmax)"))
register("cross_entropy", N_("cross-entropy"), (2,), loss_or_activation_step_through, options=("target",),
         description=N_("cross-entropy of (N, C) logits, one target class per row"))
register("gelu", "GELU", (1, 2, 3, 4), loss_or_activation_step_through,
         description=N_("x * Phi(x), Phi(x) = (1 + erf(x / sqrt(2))) / 2"))
register("gelu_tanh", "GELU (tanh)", (1, 2, 3, 4), loss_or_activation_step_through,
         description=N_("x * Phi(x), Phi(x) approximated with tanh"))
