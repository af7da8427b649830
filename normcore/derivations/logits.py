"""Step-throughs of the two logit controls of today's LLMs: soft-capping, y = c * tanh(x / c)
(Gemma 2 caps its attention scores and its final logits so), and cross-entropy with the
z-loss, CE + z_loss * mean_N(log(Z)**2) (PaLM), each checked against normcore.nn's layer
(``SoftCap``, ``CrossEntropyLoss(z_loss=...)``) and central differences.

    st = step_through("softcap", shape=(3, 4))   # u = x / c, t = tanh(u), y = c * t
    st = step_through("z_loss", shape=(4, 3))    # cross-entropy's tape, then log Z, its square,
                                                 # the mean over the rows, * z_loss, + the loss

The soft-cap's slope is 1 - t**2 with t = tanh(x / c) = y / c: the c outside and the 1/c inside
cancel, so it is not 1 - y**2. The z-loss needs log Z itself, max + log(sum(exp(s - max))),
and its gradient 2 * z_loss * log Z * d(log Z)/ds is a softmax times 2 * z_loss * log Z: the
softmax factor comes from d(log Z)/ds.
"""

import numpy as np

from ..i18n import N_, translator
from ..nn import CrossEntropyLoss, SoftCap
from .core import StepThrough, check, input_upstream, letters, no_gamma_beta, scalar_upstream
from .losses import _class_targets, cross_entropy_tape
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")

CAP = 2.0  # the soft-cap's c: the default input (mean 1, spread 2) reaches well into tanh's bend
Z_LOSS = 0.1  # PaLM's weight is 1e-4; a larger one here, so that its share shows in the digits
COMPACT = {
    "softcap": "dx = dy * (1 - t**2), t = tanh(x / c) = y / c",
    "z_loss": Phrase(N_("{ds}: cross-entropy's fused gradient plus the z-loss's"),
                     ds="ds = dloss * (softmax(s) - onehot(y) + 2 * z_loss * logZ * softmax(s)) / N"),
}


def softcap_tape(x, cap):
    """Divide by c, tanh, multiply by c: y = c * tanh(x / c)."""
    t = Tape()
    x = t.leaf("x", x)
    u = t.scale(x, 1.0 / cap, "1/c", "u", N_("divide by c"), "u", r"\tfrac{1}{c}")
    th = t.tanh(u, "t", N_("tanh"), "t")
    t.scale(th, cap, "c", "y", N_("scale by c"), "y", "c")
    return t


def z_loss_tape(s, target, z_loss, over):
    """Cross-entropy's tape (its last node ``ce``), then the z-loss from the same log-softmax:
    log Z = m + lse (the max added back to the log of the shifted sum), its square, the mean
    over the rows, times z_loss, added to the cross-entropy: loss = ce + z_loss * mean_N(logZ**2)."""
    t = cross_entropy_tape(s, target, over, out=("ce", r"L_{ce}"))
    log_z = t.add(t["m"], t["lse"], "logZ", N_("add the max back"), r"\ell_Z")
    sq = t.square(log_z, "logZ2", N_("square"), "q_Z")
    mean = t.mean(sq, (0,), "zmean", N_("mean"), "N", "m_Z")
    zl = t.scale(mean, z_loss, "z_loss", "zl", N_("scale by z_loss"), "L_z", "c_z")
    t.add(t["ce"], zl, "loss", N_("add"), "L")
    return t


def logit_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, target=None):
    """The soft-cap's or the z-loss's tape, checked against normcore.nn's layer."""
    no_gamma_beta(title, gamma, beta)
    if kind == "softcap":
        layer, tape = SoftCap(CAP), softcap_tape(x, CAP)
        dy = input_upstream(dy, rng, x.shape)
        y_ref = layer.forward(x)
        dx = layer.backward(dy)
        over = letters(kind, x.ndim)[-1]
        what = Phrase(N_("element by element, with the cap c = {c:g}"), c=CAP)
        loss_line, notes = "", [Phrase(N_("The slope is 1 - t**2 with t = y / c, not 1 - y**2: the c outside "
                                          "and the 1/c inside cancel."))]
    else:
        n, c = x.shape
        target = _class_targets(target, rng, n, c)
        layer, tape, over = CrossEntropyLoss(z_loss=Z_LOSS), z_loss_tape(x, target, Z_LOSS, "C"), "C"
        y_ref = layer.forward(x, target)
        dy = scalar_upstream(dy, kind, (1, 1))
        dx = layer.backward(dy[0, 0])
        what = Phrase(N_("the mean cross-entropy of N = {n} rows over C = {c} classes, plus z_loss = {z:g} "
                         "times the mean of log(Z)**2, Z the softmax's normaliser"), n=n, c=c, z=Z_LOSS)
        loss_line = Phrase(N_("The output is the loss itself: L = loss, so dL/dloss = dy = {dy}."),
                           dy=f"{dy[0, 0]:g}")
        notes = [Phrase(N_("Targets y (one class per row): {targets}"), targets=target.tolist()),
                 Phrase(N_("PaLM uses z_loss = 1e-4; {z:g} here, so that the z-loss's share shows in the "
                           "digits."), z=Z_LOSS)]
    st = StepThrough(kind, title, tape, dy, 0.0, over, f"{type(layer).__name__}.backward", COMPACT[kind],
                     what=what, loss_line=loss_line, notes=notes, target=target)
    check(st, y_ref, {"x" if kind == "softcap" else "s": dx}, h)
    st.properties = _properties(kind, tape, target)
    return st


def _properties(kind, tape, target):
    """What the input gradient must satisfy, measured: each value should be 0 up to rounding."""
    first = tape.nodes[0]
    ds = first.grad
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    if kind == "softcap":
        dy, y = tape.output.grad, tape.output.value
        return [(Phrase(N_("{diff}: the slope read off the output"), diff="dx - dy * (1 - (y / c)**2)"),
                 worst(ds - dy * (1.0 - (y / CAP) ** 2)))]
    p = np.exp(tape["logp"].value)  # (N, C), the softmax
    n = len(p)
    onehot = np.zeros_like(p)
    onehot[np.arange(n), target] = 1.0
    dloss, log_z = tape.output.grad[0, 0], tape["logZ"].value  # (N, 1)
    fused = dloss * (p - onehot + 2.0 * Z_LOSS * log_z * p) / n
    return [(Phrase(N_("{diff}: the staged gradient is the fused one"), diff="ds - (the compact ds)"),
             worst(ds - fused)),
            (Phrase(N_("{sum}: a row's cross-entropy share sums to 0, its z-loss share to 2 * z_loss * "
                       "logZ / N, as the softmax sums to 1"), sum="sum_C(ds) - dloss * 2 * z_loss * logZ / N"),
             worst(ds.sum(axis=1) - dloss * 2.0 * Z_LOSS * log_z[:, 0] / n))]


register("softcap", "SoftCap", (1, 2, 3, 4), logit_step_through,  # c is CAP
         description=N_("soft-capping, y = c * tanh(x / c) with c = 2, element by element"))
register("z_loss", N_("cross-entropy with z-loss"), (2,), logit_step_through, options=("target",),
         description=N_("cross-entropy of (N, C) logits plus z_loss * mean(log(Z)**2)"))
