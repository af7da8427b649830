"""Numerical gradient checking for any ``Module``: the proof that a hand-derived backward is right.

The scalar being differentiated is ``L = sum(forward(*inputs) * dy)`` with a *random* upstream
gradient ``dy``. (With ``dy = 1``, i.e. ``L = sum(y)``, the input gradient of a LayerNorm or
BatchNorm with constant gamma, as at initialisation, is exactly zero, and a wrong backward that
also returns zero would pass.) Every analytic gradient, of each
floating-point input and of each parameter, is compared with central differences

    dL/dz_i ~ (L(z + h e_i) - L(z - h e_i)) / ((z_i + h) - (z_i - h))

in float64, and scored by the relative error

    rel_error(a, n) = max|a - n| / max(1e-8, max(|a| + |n|))

which is about 1e-10 for a correct backward and of order 1 for a wrong one.

The denominator is the step actually taken: z_i + h and z_i - h are rounded to the float64
grid around z_i, whose spacing at |z_i| ~ 1e4 is 1.8e-12, so their difference can miss the
nominal 2 h by 1e-6 relative, ten times the default tolerance. What no step can fix is the
module's own rounding: a forward that loses digits at large |z| (LayerNorm computing x - mean
at x ~ 1e4) makes L(z + h e_i) - L(z - h e_i) noisy by about eps * |z|, so check such inputs
with a larger h (1e-4 there).

The same rounding sets a floor under what any step can resolve: each evaluation of L rounds
about eps * S, with S = sum(|forward(*inputs) * dy|), so a central difference is noisy by
about eps * S / h in absolute terms (measured: the largest absolute error of a correct
backward is 0.5 to 1.3 times that). A tensor whose gradient is tiny next to the loss (block 2's
query weights in a small Pre-LN model, say) can then miss ``tol`` although its backward is
right. Such a tensor passes when its absolute error is below ``NOISE_FACTOR * eps * S / h``, and
its check says so (``at_noise_floor``); a wrong backward is off by the size of the gradient
itself, far above that floor.

Each evaluation runs on a fresh copy of the module, so the module you pass is never changed
(BatchNorm's running statistics are not updated) and a Dropout layer draws the same mask every
time (its generator is copied in the same state).
"""

import copy
import functools
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ._array import flag
from .i18n import N_, translator
from .i18n.width import pad
from .module import Module

_ = translator("cli")
NOISE_FACTOR = 5.0  # the floor's margin over the measured noise (at most 1.3 eps * S / h)


def rel_error(a: ArrayLike, b: ArrayLike) -> float:
    """max|a - b| / max(1e-8, max(|a| + |b|)): the relative error of two gradients."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size == 0:
        return 0.0
    return float(np.max(np.abs(a - b)) / max(1e-8, float(np.max(np.abs(a) + np.abs(b)))))


@dataclass
class TensorCheck:
    """The verdict on one gradient: of an input (``"x"``) or of a parameter (``"weight"``...)."""

    name: str
    shape: tuple[int, ...]
    rel_error: float
    max_abs_error: float
    passed: bool
    at_noise_floor: bool = False  # passed only because the error is below the rounding floor


    @property
    def verdict(self) -> str:
        """"pass", "pass*" (at the noise floor, see ``NOISE_NOTE``) or "FAIL"."""
        return "FAIL" if not self.passed else "pass*" if self.at_noise_floor else "pass"


NOISE_NOTE = N_("* above tol, but the absolute error is below the rounding noise of the "
                "finite\n  differences (eps * sum|y * dy| / h): no step resolves it")  # _(NOISE_NOTE) shows it


@dataclass
class GradcheckReport:
    """The result of ``gradcheck``: one ``TensorCheck`` per input and parameter."""

    module: str
    checks: list[TensorCheck] = field(default_factory=list)
    tol: float = 1e-7

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)

    @property
    def errors(self) -> dict[str, float]:
        """{tensor name: relative error}."""
        return {c.name: c.rel_error for c in self.checks}

    def __getitem__(self, name: str) -> TensorCheck:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no gradient named {name!r} was checked; checked: {[c.name for c in self.checks]}")

    def table(self, header: bool = True) -> str:
        """One row per tensor, in 80 columns: the module column gives way to long tensor names.
        The header and the verdicts are in the language in use; the numbers are the same."""
        name_w = max([14] + [len(c.name) for c in self.checks])
        shape_w = max([16] + [len(str(c.shape)) for c in self.checks])
        mod_w = max(6, min(28, 80 - (name_w + shape_w + 21)))
        heads = (pad(_("module"), mod_w), pad(_("tensor"), name_w), pad(_("shape"), shape_w),
                 pad(_("rel error"), 10, ">"), _("result"))
        rows = [" ".join(heads[:4]) + "  " + heads[4]] if flag(header, "header", "GradcheckReport.table") else []
        verdicts = {"pass": _("pass"), "pass*": _("pass") + "*", "FAIL": _("FAIL")}
        for c in self.checks:
            rows.append(
                f"{self.module[:mod_w]:<{mod_w}} {c.name:<{name_w}} {str(c.shape):<{shape_w}} "
                f"{c.rel_error:>10.2e}  {verdicts[c.verdict]}"
            )
        if any(c.at_noise_floor for c in self.checks):
            rows.append(_(NOISE_NOTE))
        return "\n".join(rows)

    def __str__(self) -> str:
        return self.table()


def gradcheck(module: Module, *inputs: ArrayLike, dy: ArrayLike | None = None, h: float = 1e-6,
              tol: float = 1e-7, seed: int = 0, name: str | None = None) -> GradcheckReport:
    """Compare ``module``'s analytic gradients with central differences; return a report.

    Parameters
    ----------
    module : Module
        Any module with ``forward`` and ``backward``. It is checked on a copy whose parameters
        and floating-point buffers are cast to float64 (finite differences need the precision).
    *inputs : arrays
        The forward's inputs. Floating-point inputs are cast to float64 and checked; integer
        inputs (token ids, class targets) are passed through and not differentiated.
    dy : array, optional
        The upstream gradient; by default standard normal of the output's shape, drawn from
        ``seed`` (from a stream other than ``default_rng(seed)``'s).
    h : float
        The central-difference step.
    tol : float
        A gradient passes when its relative error is at most ``tol``.
    name : str, optional
        The module's name in the report (default: its class name).

    ``module.backward(dy)`` returns dL/d(input) when there is one floating-point input (a loss
    taking logits and integer targets may return just dL/dlogits), otherwise a tuple with one
    entry per input (``None`` for inputs that are not differentiated), or ``None`` when no input
    is floating point (a model of integer tokens: only its parameters are checked).
    """
    arrays = [np.array(x, dtype=np.float64) if np.issubdtype(np.asarray(x).dtype, np.floating)
              else np.asarray(x) for x in inputs]
    diff = [i for i, x in enumerate(arrays) if np.issubdtype(x.dtype, np.floating)]
    base = copy.deepcopy(module).to(np.float64)

    # Analytic gradients, on a fresh copy.
    m = copy.deepcopy(base)
    m.zero_grad()
    y = np.asarray(m.forward(*arrays))
    if dy is None:
        # A stream of its own: with default_rng(seed), an input drawn from the same seed would
        # equal dy, and LayerNorm's input gradient would nearly vanish for gamma = 1.
        dy = np.random.default_rng([seed, 1]).standard_normal(y.shape)
    dy = np.asarray(dy, dtype=np.float64)
    noise_floor = NOISE_FACTOR * np.finfo(np.float64).eps * float(np.sum(np.abs(y * dy))) / h
    grads = m.backward(dy)
    if grads is None and not diff:  # integer inputs only: no input gradient to check
        grads = (None,) * len(arrays)
    if not isinstance(grads, tuple):  # one gradient: that of the one floating-point input
        grads = (tuple(grads if i == diff[0] else None for i in range(len(arrays))) if len(diff) == 1
                 else (grads,))
    if len(grads) != len(arrays):
        raise ValueError(
            f"gradcheck: {type(module).__name__}.backward returned {len(grads)} gradient(s) "
            f"for {len(inputs)} input(s); return one per input (None where not differentiable)"
        )
    analytic = {f"x{i}" if len(arrays) > 1 else "x": grads[i] for i in diff}
    analytic.update({n: p.grad.copy() for n, p in m.named_parameters()})

    fresh = _copier(base)

    def loss(inputs_: list[np.ndarray], param: str | None = None, value: np.ndarray | None = None) -> float:
        mm = fresh()
        if param is not None:
            dict(mm.named_parameters())[param].data[...] = value
        return float(np.sum(np.asarray(mm.forward(*inputs_), dtype=np.float64) * dy))

    def numerical(z: np.ndarray, f: Callable[[], float]) -> np.ndarray:
        g = np.zeros_like(z, dtype=np.float64)
        for idx in np.ndindex(z.shape):
            old = z[idx]
            z[idx] = old + h
            up, fp = z[idx], f()
            z[idx] = old - h
            down, fm = z[idx], f()
            z[idx] = old
            g[idx] = (fp - fm) / (up - down)  # the step actually taken, not the nominal 2 h
        return g

    report = GradcheckReport(name or type(module).__name__, tol=tol)
    for i in diff:
        key = f"x{i}" if len(arrays) > 1 else "x"
        num = numerical(arrays[i], lambda: loss(arrays))
        report.checks.append(_verdict(key, analytic[key], num, tol, noise_floor))
    for pname, p in base.named_parameters():
        value = p.data.astype(np.float64).copy()
        num = numerical(value, functools.partial(loss, arrays, pname, value))
        report.checks.append(_verdict(pname, analytic[pname], num, tol, noise_floor))
    return report


def _copier(module: Module) -> Callable[[], Module]:
    """A function that returns a new copy of ``module`` in its present state at each call.

    Every loss evaluation starts from the same state (a Dropout's generator, BatchNorm's running
    statistics), so each gets its own copy. The copies are unpickled from one snapshot, about
    twice as fast as ``copy.deepcopy`` on a model; a module that cannot be pickled (a layer bound
    to a process group, which its copies share, or one holding a lambda) is deep-copied instead.
    """
    try:
        snapshot = pickle.dumps(module, protocol=pickle.HIGHEST_PROTOCOL)
        pickle.loads(snapshot)
    except Exception:  # noqa: BLE001 - whatever pickle refuses, deepcopy is the general way
        return functools.partial(copy.deepcopy, module)
    return functools.partial(pickle.loads, snapshot)


def _verdict(name: str, analytic: ArrayLike | None, numerical: np.ndarray, tol: float,
             noise_floor: float) -> TensorCheck:
    if analytic is None:
        raise ValueError(f"gradcheck: expected a gradient of the floating-point input {name} (an array "
                         f"of its shape {numerical.shape}), backward returned None")
    analytic = np.asarray(analytic, dtype=np.float64)
    if analytic.shape != numerical.shape:
        raise ValueError(
            f"gradcheck: the gradient of {name} has shape {analytic.shape}, expected {numerical.shape}"
        )
    err = rel_error(analytic, numerical)
    max_abs = float(np.max(np.abs(analytic - numerical))) if analytic.size else 0.0
    at_floor = err > tol and max_abs <= noise_floor
    return TensorCheck(name, numerical.shape, err, max_abs, bool(err <= tol or at_floor), bool(at_floor))
