"""``compare``: a normcore module and its ``to_torch`` twin, forward and backward on the same
inputs, one ``Row`` per output, gradient and buffer, judged by ``TOLERANCES``; the table of
a ``BridgeReport``.
"""

from dataclasses import dataclass, field

import numpy as np

from .. import nn
from .._array import largest_finite
from ..i18n import N_, translator
from ..i18n.width import display_width, pad
from .core import _dtype_of, _numpy, _torch, key_map, to_torch

_ = translator("cli")


# (atol, rtol) per dtype. Unit roundoff u is 1.1e-16 (float64), 6.0e-8 (float32) and 4.9e-4
# (float16). Two correct implementations that sum in a different order differ by about u
# times the length of the reductions times the condition of the computation; a forward plus
# a backward through a few layers loses a few more digits. So: float64 1e-9 (about 1e7 u,
# room for long reductions and ill-conditioned norms, yet a wrong derivative term is off by
# far more), float32 1e-4 (about 1e3 u), float16 1e-2 (about 20 u: float16 keeps ~3 digits).
TOLERANCES = {np.dtype(np.float64): (1e-9, 1e-9), np.dtype(np.float32): (1e-4, 1e-4),
              np.dtype(np.float16): (1e-2, 1e-2)}


@dataclass
class Row:
    """One compared tensor: normcore's ``ours`` against torch's ``theirs``."""
    name: str
    shape: tuple
    max_abs: float
    max_rel: float
    index: tuple  # where |ours - theirs| exceeds the tolerance the most
    passed: bool
    shown: str = ""  # the name as the table shows it, in the language in use (default: name)

    def line(self):
        """One table line (a name wider than 30 columns gets a line of its own); <= 80 columns."""
        shape = "x".join(map(str, self.shape)) or "()"
        index = "(" + ",".join(map(str, self.index)) + ")"
        if len(index) > 14:
            index = index[:12] + ".)"
        verdict = _("ok") if self.passed else _("FAIL")
        rest = (f"{shape[-9:]:>9} {self.max_abs:8.1e} {self.max_rel:8.1e} {index:>14} "
                f"{pad(verdict, 4, '>')}")
        name = self.shown or self.name
        if display_width(name) > 30:
            return f"{name[:80]}\n{'':30} {rest}"
        return f"{pad(name, 30)} {rest}"


@dataclass
class BridgeReport:
    """What ``compare`` found: one ``Row`` per output, gradient and buffer."""
    module: str
    dtype: str
    atol: float
    rtol: float
    training: bool
    rows: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # printed above the verdict

    @property
    def passed(self):
        return all(r.passed for r in self.rows)

    def head(self):
        """The lines above the table: what was compared, and how a row is judged."""
        title = (N_("{module} against torch.nn, {dtype}, train mode") if self.training
                 else N_("{module} against torch.nn, {dtype}, eval mode"))
        return [_(title).format(module=self.module[:40], dtype=self.dtype),
                *_("ok where |ours - torch| <= atol s + rtol |torch|, atol={atol}, rtol={rtol}, "
                   "with s\nthe tensor's largest |torch| (for a gradient: the largest of all the "
                   "gradients,\nso that one 0 in theory is judged at the scale of its backward "
                   "pass);\nmax rel = max abs / s").format(
                       atol=f"{self.atol:.0e}", rtol=f"{self.rtol:.0e}").splitlines()]

    def lines(self):
        names = [_("tensor"), _("shape"), _("max abs"), _("max rel"), _("worst index")]
        cols = " ".join([pad(names[0], 30)] + [pad(name, w, ">") for name, w in zip(names[1:], (9, 8, 8, 14))]
                        + [" " * 4])
        failed = sum(not r.passed for r in self.rows)
        verdict = (_("all match") if self.passed
                   else _("{failed} of {total} differ").format(failed=failed, total=len(self.rows)))
        rows = "\n".join([r.line() for r in self.rows] + self.notes).splitlines()
        return [*self.head(), cols, "-" * 78, *rows, verdict]

    def __str__(self):
        return "\n".join(self.lines())


def _row(name, ours, theirs, atol, rtol, scale=None, shown=""):
    """Compare two arrays elementwise: ok where |ours - theirs| <= atol s + rtol |theirs|, s the
    ``scale`` (default: the largest finite |theirs|). Equal values (infinities too) and NaN on
    both sides agree; a NaN on one side only is an infinite difference. ``shown``: the row's
    name in the table, when it is not ``name``."""
    a = np.asarray(ours, dtype=np.float64)
    b = np.asarray(theirs, dtype=np.float64)
    if a.shape != b.shape:
        return Row(name, a.shape, np.inf, np.inf, (), False, shown)
    diff = np.abs(a - b)
    same_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(same_nan | (a == b), 0.0, diff)  # equal infinities and NaNs agree
    diff = np.where(np.isnan(diff), np.inf, diff)
    if a.size == 0:
        return Row(name, a.shape, 0.0, 0.0, (), True, shown)
    s = largest_finite(b) if scale is None else scale
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):  # s = 0: torch's all 0
        excess = np.where(diff > 0, diff / (atol * s + rtol * np.abs(np.nan_to_num(b))), 0.0)
        rel = diff.max() / s if diff.max() > 0 else 0.0
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    return Row(name, a.shape, float(diff.max()), float(rel), tuple(map(int, worst)),
               bool(excess.max() <= 1.0), shown)


def compare(module, *inputs, dy=None, atol=None, rtol=None, out=print, seed=0, options=None):
    """Run ``module`` and ``to_torch(module)`` forward and backward on the same inputs.

    Floating inputs get gradients; integer inputs (token ids, class indices) and boolean
    masks pass through. A loss takes ``(logits, targets)``, the targets class indices or
    floating class probabilities, and its upstream gradient is a scalar. ``dy`` defaults to a
    random array of the output's shape (a random scalar for a loss) from ``seed``: never
    ones, which hide bugs. Rows: the output, the gradient of the
    first floating input (what normcore's backward returns; None for token ids), every
    parameter's gradient (normcore's names) and every buffer after the forward (BatchNorm's
    running statistics). Modes are copied across: training and evaluation both work.
    ``atol``/``rtol`` default to ``TOLERANCES`` for the parameters' dtype (the inputs' when
    there are none); floating inputs must be in that dtype (a ``TypeError`` says so). ``atol``
    is relative to the tensor's largest |value| in torch, for a gradient to the largest of
    all the gradients (input and parameters): a gradient that is 0 in theory (a bias right
    before a BatchNorm) is rounding noise on both sides, judged at the scale of its pass.
    ``out`` receives each line of the table (None: silent). Returns a ``BridgeReport``;
    normcore's parameter gradients are reset first.

    A module whose backward returns a tuple, as ``MultiheadAttention``'s (dquery, dkey,
    dvalue), gets one row per floating input instead: "input 0 grad", "input 1 grad", ...
    ``options``: keyword arguments both forwards get (attention's ``need_weights``,
    ``average_attn_weights``, ``is_causal``). A forward returning (output, weights), as
    attention's with ``need_weights=True``, gets a row for the weights, and a random upstream
    gradient of the weights too (``backward(dy, dweights)``), so that their backward is compared.
    """
    torch = _torch()
    tmodule = to_torch(module)  # before the forward: the same weights and running statistics
    arrays = [None if x is None else np.asarray(x) for x in inputs]  # None: an absent mask
    floats = [x for x in arrays if x is not None and np.issubdtype(x.dtype, np.floating)]
    dtype = _dtype_of(module) if module.parameters() or not floats else floats[0].dtype
    for i, x in enumerate(floats):
        if x.dtype != dtype:
            raise TypeError(f"compare: {type(module).__name__} computes in {np.dtype(dtype)} (its "
                            f"parameters'); floating input {i} is {x.dtype}: give it as "
                            f"x.astype(np.{np.dtype(dtype)})")
    d_atol, d_rtol = TOLERANCES.get(np.dtype(dtype), TOLERANCES[np.dtype(np.float32)])
    atol = d_atol if atol is None else atol
    rtol = d_rtol if rtol is None else rtol
    def torch_input(x):  # floats (class probabilities too) as they are; ids, class indices as int64
        if x is None or np.issubdtype(x.dtype, np.floating):
            return None if x is None else torch.tensor(x.copy(), requires_grad=True)
        return torch.from_numpy(x.copy() if x.dtype == bool else x.astype(np.int64))
    tinputs = [torch_input(x) for x in arrays]

    options = {} if options is None else options
    module.zero_grad()
    y, w = _output_and_weights(module(*[None if x is None else x.copy() for x in arrays], **options))
    y = np.asarray(y)  # a loss's scalar too
    rng = np.random.default_rng(seed)
    if dy is None:
        dy = rng.standard_normal(y.shape).astype(y.dtype)
    dy = np.asarray(dy, dtype=y.dtype)
    dw = None if w is None else rng.standard_normal(w.shape).astype(w.dtype)
    dx = module.backward(dy) if w is None else module.backward(dy, dw)

    ty, tw = _output_and_weights(tmodule(*tinputs, **options))
    touts, tgrads_out = [ty], [torch.from_numpy(dy.copy()).to(ty.dtype)]
    if w is not None:
        touts.append(tw)
        tgrads_out.append(torch.from_numpy(dw.copy()).to(tw.dtype))
    torch.autograd.backward(touts, tgrads_out)

    report = BridgeReport(type(module).__name__, str(np.dtype(dtype)), atol, rtol,
                          module.training)
    if any(isinstance(m, nn.Dropout) and m.training and m.p > 0
           for _name, m in module.named_modules()):
        report.notes.append(_("note: Dropout in training mode draws different masks in normcore "
                              "and torch;\n      expect differences (compare in eval mode)"))
    report.rows.append(_row("output", y, _numpy(ty), atol, rtol, shown=_("output")))
    if w is not None:
        report.rows.append(_row("attention weights", w, _numpy(tw), atol, rtol, shown=_("attention weights")))
    gradients = []  # (row name, shown name, ours, torch's): the input gradients, then every parameter's
    tgrads = [t for t in tinputs if t is not None and t.requires_grad]
    if isinstance(dx, tuple):  # one gradient per floating input, in order (attention: query, key, value)
        gradients += [(f"input {i} grad", _("input {i} grad").format(i=i), ours, _numpy(t.grad))
                      for i, (ours, t) in enumerate(zip(dx, tgrads))]
    elif dx is not None and tgrads:
        gradients.append(("input grad", _("input grad"), dx, _numpy(tgrads[0].grad)))
    keys = key_map(module, tmodule)
    tparams = dict(tmodule.named_parameters())
    for name, p in module.named_parameters():
        tkey, rows = keys[name]
        tgrad = tparams[tkey].grad
        gradients.append((f"{name} grad", _("{name} grad").format(name=name), p.grad,
                          np.zeros(p.shape) if tgrad is None else _numpy(tgrad)[rows]))
    scale = max((largest_finite(theirs) for *_rest, theirs in gradients), default=0.0)  # of the pass
    for name, shown, ours, theirs in gradients:
        report.rows.append(_row(name, ours, theirs, atol, rtol, scale, shown))
    tbuffers = dict(tmodule.named_buffers())
    for name, b in module.named_buffers():
        tkey, rows = keys[name]
        report.rows.append(_row(name, b, _numpy(tbuffers[tkey])[rows], atol, rtol))
    if out is not None:
        for line in report.lines():
            out(line)
    return report


def _output_and_weights(out):
    """(output, weights) of a forward: attention asked for its weights returns the pair
    (output, weights or None); any other forward its output alone (weights None)."""
    return (out[0], out[1]) if isinstance(out, tuple) else (out, None)
