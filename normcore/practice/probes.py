"""Running the practice grader's probes: what one probe records on a layer, and how far apart
two recordings are.

A probe (``exercises/``) drives a layer through the practice contract (``driver.py``) and
records observations (outputs, gradients, running statistics, dtypes); ``run_probe`` collects
them, and ``distance`` compares one observation with the reference's.

A parameter's gradient is judged at the scale of the backward pass that produced it: its
difference from the reference is relative to the largest parameter gradient of that pass
(the observation's ``scale``), when that is larger than the gradient itself. A weight whose
gradient cancels to ~0 (attention over one position, a saturated softmax) then passes when
it differs by rounding or by a 1e-12 added to a denominator for safety, and still fails
when it is wrong by a fraction of the gradients the pass carries. The input's gradient
(dx, dlogits) is judged on its own size: it is the signal the layer passes down.
"""

import re
import warnings
from dataclasses import dataclass

import numpy as np

from .._array import largest_finite
from ..i18n import translator
from .driver import ContractError, NotApplicable

_ = translator("practice")


F64, F32 = 1e-8, 1e-5  # relative tolerances of float64 and float32 observations


class Tolerance(float):
    """An observation's tolerance, and ``float32``: the tolerance the same observation would
    have on a float32 input of the same magnitude (``exercises._tol``). An answer that computes
    in float32 inside meets the first on float32 probes and the second on float64 ones."""

    def __new__(cls, tol, float32):
        tolerance = super().__new__(cls, tol)
        tolerance.float32 = float(float32)
        return tolerance


@dataclass
class Observation:
    value: object
    tol: float
    metric: str  # "rel", "abs" or "equal"
    scale: float = 0.0  # a parameter gradient's: the largest of its backward pass (else 0)
    tol32: float = 0.0  # float32's tolerance for it (see float32_tolerance)


def float32_tolerance(tol, metric):
    """What float32 rounding inside an answer may cost this observation: the ``Tolerance``'s
    own when the probe knew its input; F32 for another float64 relative one (inputs of
    magnitude up to 10); nothing beyond ``tol`` for the rest (counts, fractions, names, the
    float32 and float16 probes' own tolerances)."""
    if hasattr(tol, "float32"):
        return max(tol.float32, float(tol))
    return F32 if metric == "rel" and tol == F64 else float(tol)


@dataclass
class ProbeRun:
    rows: dict  # label -> Observation, in the order recorded
    error: BaseException = None


def error_kind(error):
    """The kind of exception a probe's run raised (None when it raised none): its class's
    module and name. An exception the answer raised in its own process reaches the grader as
    a record (``loading.RaisedError``) that keeps the kind of the original."""
    if error is None:
        return None
    return getattr(error, "original_kind", None) or f"{type(error).__module__}.{type(error).__qualname__}"


def run_probe(probe, make):
    """Run one probe on the layers ``make`` builds; the observations, and the error if it raised.

    When the probe's input is not float64 (it then records ``output dtype``), the dtype of
    dx and of every parameter gradient is recorded too, right after the gradient itself:
    dx must have the input's dtype, a parameter's gradient the parameter's dtype.
    """
    rows, drivers, passes, pass_of = {}, [], [0], {}

    def rec(label, value, tol, metric="rel"):
        if isinstance(value, np.ndarray):
            value = value.copy()  # the layer may change its arrays in place later
            if metric == "rel" and is_parameter_gradient(label):
                pass_of[label] = passes[0]
        rows[label] = Observation(value, float(tol), metric, tol32=float32_tolerance(tol, metric))
        prefix, _, name = label.rpartition(": ")
        prefix = prefix + ": " if prefix else ""
        if prefix + "output dtype" in rows and GRADIENT.fullmatch(name) and drivers:
            rows[label + " dtype"] = Observation(
                _grad_dtype(value, drivers[-1], name[1:]), 0, "equal")

    def tracked(*args, **kwargs):
        driver = make(*args, **kwargs)
        backward = driver.backward

        def counted(dy):  # the parameter gradients recorded after it are of this pass
            passes[0] += 1
            return backward(dy)
        driver.backward = counted
        drivers.append(driver)
        return driver

    error = None
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe.run(rec, tracked, np.random.default_rng(sum(map(ord, probe.label))))
    except Exception as e:  # the layer under test may raise anything
        error = e
    _scale_parameter_gradients(rows, pass_of)
    return ProbeRun(rows, error)


def _scale_parameter_gradients(rows, pass_of):
    """Each parameter gradient's scale: the largest finite |value| of its backward pass."""
    largest = {}
    for label, k in pass_of.items():
        try:
            value = largest_finite(rows[label].value)
        except (TypeError, ValueError):  # not numbers: compared as such by distance
            continue
        largest[k] = max(largest.get(k, 0.0), value)
    for label, k in pass_of.items():
        rows[label].scale = largest.get(k, 0.0)


GRADIENT = re.compile(r"d[a-z_0-9]+")  # a gradient's row: dx, dlogits, dgamma, dwq, ...


def _grad_dtype(value, driver, name):
    """'float32' for dx; for a parameter's gradient "the parameter's" when its dtype is the
    parameter's own, else what it is (a float64 dx for a float32 input is a mistake)."""
    dtype = getattr(value, "dtype", None)
    if name in ("x", "logits"):
        return str(dtype)
    try:
        param = driver.param_dtype(name)
    except ContractError:
        return str(dtype)
    return "the parameter's" if dtype == param else f"{dtype} for a {param} parameter"


def distance(a, b, metric, scale=0.0):
    """How far observation a is from b (0 = the same); nan and inf count as equal to themselves.

    "rel": max|a - b| relative to max(|a| + |b|), or to ``scale`` when that is larger (a
    parameter gradient's backward pass, see the module's docstring); "abs": max|a - b|;
    "equal": 0 or inf.
    """
    if metric == "equal":
        return 0.0 if a == b else float("inf")
    if a is None or b is None:
        return 0.0 if a is b else float("inf")
    try:
        a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):  # not an array of numbers (e.g. a tuple of gradients)
        return float("inf")
    if a.shape != b.shape:
        if a.size != b.size:
            return float("inf")
        a = a.reshape(b.shape)
    same = (a == b) | (np.isnan(a) & np.isnan(b))
    if not same.all() and not (np.isfinite(a[~same]).all() and np.isfinite(b[~same]).all()):
        return float("inf")
    a, b = np.where(same, 0.0, a), np.where(same, 0.0, b)
    if not a.size:
        return 0.0
    gap = float(np.max(np.abs(a - b)))
    if metric == "abs":
        return gap
    return gap / max(1e-8, scale, float(np.max(np.abs(a) + np.abs(b))))


def mismatch_note(user, ref):
    """A short note for an observation that cannot be compared number for number."""
    if user is None:
        return _("returned None")
    if isinstance(ref, str):
        return _("{user}, expected {ref}").format(user=user, ref=ref)
    try:
        u = np.asarray(user, dtype=np.float64)
    except (TypeError, ValueError):
        return _("a {type}, expected an array").format(type=type(user).__name__)
    r = np.asarray(ref)
    if u.shape != r.shape and u.size != r.size:
        return _("shape {shape}, expected {expected}").format(shape=u.shape, expected=r.shape)
    if not np.isfinite(u).all():
        return _("contains nan or inf")
    return ""


def is_parameter_gradient(row):
    """Whether an observation is a parameter's gradient (dgamma, dwq, ...), not the input's."""
    name = row.rpartition(": ")[2].partition(" ")[0]
    return bool(GRADIENT.fullmatch(name)) and name not in ("dx", "dlogits")


UNOBSERVED = (NotImplementedError, NotApplicable)  # the answer left these observations unmade


def is_dtype_row(label):
    """Whether an observation is a dtype's (``"dx dtype"``), not a value's."""
    return label.endswith("dtype")


def is_backward(row):
    """Whether an observation comes from the backward pass (dx, a parameter gradient, ...)."""
    name = row.rpartition(": ")[2]
    return bool(GRADIENT.match(name.partition(" ")[0])) or "gradient" in name
