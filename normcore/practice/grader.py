"""The practice grader: import the user's file, run every probe, compare, diagnose, report.

For each probe the same inputs go to normcore's own layer (the reference) and to the user's
class; every recorded observation becomes one check. When checks fail, the catalogued
mistakes' mutants (``catalog.py``) run the same probe, and a failure is diagnosed as the
mistake whose numbers the user's numbers match: first a mutant that reproduces *every*
observation of the probe ("reproduces"), otherwise one that reproduces that failing
observation ("matches"). The user's source is never read; only their numbers are compared.
The forward comes before the backward: a backward failure no mistake explains, in a probe
whose forward fails, is reported as following from the forward. Hints for the failures no
mistake explains depend on the exercise and on what failed.
"""

import importlib.resources
import importlib.util
import re
import sys
import textwrap
import traceback
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..gradcheck import rel_error
from .catalog import BY_ID, mistakes_for
from .driver import ContractError, Driver, NotApplicable
from .exercises import EXERCISES


class CannotGrade(Exception):
    """The file cannot be graded (missing, does not import, no suitable class); says why."""


# --- loading ------------------------------------------------------------------------------------
def load_module(path):
    """Import a Python file as a fresh module; a syntax or import error becomes CannotGrade."""
    path = Path(path)
    if not path.is_file():
        raise CannotGrade(f"{path}: no such file")
    name = f"_normcore_practice_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # some code (dataclasses, for one) looks its module up while it runs
    try:
        spec.loader.exec_module(module)
    except SyntaxError as e:
        where = f"line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
        code = (e.text or "").rstrip("\n")
        sys.modules.pop(name, None)
        raise CannotGrade(
            f"{path} does not compile: {type(e).__name__} at {where}: {e.msg}"
            + (f"\n    {code}" if code.strip() else "")
        ) from None
    except Exception as e:  # anything raised while the file's top level runs
        sys.modules.pop(name, None)
        raise CannotGrade(f"importing {path} raised {_describe(e, path)}") from None
    return module


def find_class(module, name=None):
    """The class to grade: ``name``, or the one class defined in the file with forward and backward."""
    if name is not None:
        cls = getattr(module, name, None)
        if not isinstance(cls, type):
            raise CannotGrade(f"the file defines no class named {name}")
        return cls
    found = [c for c in vars(module).values()
             if isinstance(c, type) and c.__module__ == module.__name__
             and callable(getattr(c, "forward", None)) and callable(getattr(c, "backward", None))]
    if not found:
        raise CannotGrade("the file defines no class with forward and backward methods")
    if len(found) > 1:
        names = ", ".join(c.__name__ for c in found)
        raise CannotGrade(f"the file defines several layer classes ({names}); choose one with --name")
    return found[0]


def exercise_for(cls, layer=None):
    """The exercise a class is graded as: ``layer``, or the one its name says."""
    if layer is not None:
        if layer not in EXERCISES:
            raise CannotGrade(f"unknown exercise {layer!r}; choose one of {', '.join(EXERCISES)}")
        return EXERCISES[layer]
    key = cls.__name__.lower()
    named = [(len(word), exercise) for exercise in EXERCISES.values()
             for word in (exercise.name.replace("_", ""), exercise.class_name.lower())
             if word in key]
    if named:  # the longest name that fits: LogSoftmax is not Softmax
        return max(named, key=lambda n: n[0])[1]
    if "rms" in key:
        return EXERCISES["rmsnorm"]
    raise CannotGrade(f"cannot tell which exercise {cls.__name__} is; say it with --layer "
                      f"({', '.join(EXERCISES)})")


def _describe(exc, path=None):
    """'ValueError: message (file.py line 12, in forward)': the innermost frame in ``path``."""
    text = f"{type(exc).__name__}: {exc}"
    where = _user_frame(exc, path)
    if where is not None:
        text += f" ({Path(where.filename).name} line {where.lineno}, in {where.name})"
    return text


def _user_frame(exc, path):
    if path is None:
        return None
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if Path(f.filename).resolve() == Path(path).resolve()]
    return frames[-1] if frames else None


# --- running probes -----------------------------------------------------------------------------
@dataclass
class Observation:
    value: object
    tol: float
    metric: str  # "rel", "abs" or "equal"


@dataclass
class ProbeRun:
    rows: dict  # label -> Observation, in the order recorded
    error: BaseException = None


def run_probe(probe, make):
    """Run one probe on the layers ``make`` builds; the observations, and the error if it raised.

    When the probe's input is not float64 (it then records ``output dtype``), the dtype of
    dx and of every parameter gradient is recorded too, right after the gradient itself:
    dx must have the input's dtype, a parameter's gradient the parameter's dtype.
    """
    rows, drivers = {}, []

    def rec(label, value, tol, metric="rel"):
        if isinstance(value, np.ndarray):
            value = value.copy()  # the layer may change its arrays in place later
        rows[label] = Observation(value, tol, metric)
        prefix, _, name = label.rpartition(": ")
        prefix = prefix + ": " if prefix else ""
        if prefix + "output dtype" in rows and GRADIENT.fullmatch(name) and drivers:
            rows[label + " dtype"] = Observation(
                _grad_dtype(value, drivers[-1], name[1:]), 0, "equal")

    def tracked(*args, **kwargs):
        drivers.append(make(*args, **kwargs))
        return drivers[-1]

    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            probe.run(rec, tracked, np.random.default_rng(sum(map(ord, probe.label))))
    except Exception as e:  # the layer under test may raise anything
        return ProbeRun(rows, e)
    return ProbeRun(rows)


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


def maker(cls):
    """make(*args, **kwargs) -> Driver around a fresh instance; an ``rng`` it does not take is dropped."""
    def make(*args, **kwargs):
        try:
            return Driver(cls(*args, **kwargs))
        except TypeError as e:
            if "rng" not in kwargs or "rng" not in str(e):
                raise
            kwargs.pop("rng")
            return Driver(cls(*args, **kwargs))
    return make


def distance(a, b, metric):
    """How far observation a is from b (0 = the same); nan and inf count as equal to themselves."""
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
    if metric == "abs":
        return float(np.max(np.abs(a - b))) if a.size else 0.0
    return rel_error(a, b)


def _mismatch_note(user, ref):
    """A short note for an observation that cannot be compared number for number."""
    if user is None:
        return "returned None"
    if isinstance(ref, str):
        return f"{user}, expected {ref}"
    try:
        u = np.asarray(user, dtype=np.float64)
    except (TypeError, ValueError):
        return f"a {type(user).__name__}, expected an array"
    r = np.asarray(ref)
    if u.shape != r.shape and u.size != r.size:
        return f"shape {u.shape}, expected {r.shape}"
    if not np.isfinite(u).all():
        return "contains nan or inf"
    return ""


# --- grading ------------------------------------------------------------------------------------
def is_backward(row):
    """Whether an observation comes from the backward pass (dx, a parameter gradient, ...)."""
    name = row.rpartition(": ")[2]
    return bool(GRADIENT.match(name.partition(" ")[0])) or "gradient" in name


@dataclass
class Check:
    probe: str
    row: str
    status: str  # "pass", "FAIL", "TODO" (not implemented yet), "ERROR" (raised), "n/a"
    error: float = None  # distance to the reference
    note: str = ""
    diagnoses: list = field(default_factory=list)  # catalog ids
    whole_probe: bool = False  # the diagnosis reproduces every observation of the probe
    combined_with: list = field(default_factory=list)  # the two mistakes, when a pair explains it
    follows: bool = False  # an undiagnosed backward failure in a probe whose forward fails

    @property
    def confidence(self):
        """'reproduces' (a mutant gives every number of the probe), 'matches' (it gives this
        failing number only), or '' when there is no diagnosis."""
        if not self.diagnoses:
            return ""
        return "reproduces" if self.whole_probe else "matches"

    @property
    def backward(self):
        return is_backward(self.row)

    @property
    def label(self):
        return f"{self.probe}: {self.row}"


@dataclass
class Report:
    file: str
    class_name: str
    exercise: object
    checks: list
    not_implemented: list  # method names still raising NotImplementedError

    @property
    def passed(self):
        return all(c.status in ("pass", "n/a") for c in self.checks)

    @property
    def diagnosis_ids(self):
        return sorted({d for c in self.checks for d in c.diagnoses})


_SHARED = {}  # (exercise, reference answer, catalog entries) -> _Mutants, see _Mutants.of


class _Mutants:
    """Every catalogued mutant of an exercise (and every pair of them), built once, run lazily.

    A mutant is keyed by a tuple of (mistake id, variant number); a pair combines the
    replacements of two mistakes, when they do not touch the same piece of the answer.
    """

    def __init__(self, exercise):
        self.exercise = exercise
        self.source = solution_source(exercise.name)
        self.singles = [((m.id, k),) for m in mistakes_for(exercise.name)
                        for k in range(len(m.variants[exercise.name]))]
        self._classes, self._runs, self._reference = {}, {}, {}

    @classmethod
    def of(cls, exercise):
        """The exercise's mutants, shared by every grade() in this process: their runs (and the
        reference's) depend only on the probe, whose inputs are seeded, so a class of 30 files
        runs each mutant once. A new reference answer or catalog entry starts afresh."""
        key = (exercise.name, id(exercise), solution_source(exercise.name),
               repr([(m.id, m.variants[exercise.name]) for m in mistakes_for(exercise.name)]))
        if key not in _SHARED:
            _SHARED[key] = cls(exercise)
        return _SHARED[key]

    def reference(self, probe):
        """The probe's run on normcore's own layer."""
        if probe.label not in self._reference:
            self._reference[probe.label] = run_probe(probe, maker(self.exercise.reference))
        return self._reference[probe.label]

    def pairs(self):
        for i, a in enumerate(self.singles):
            for b in self.singles[i + 1:]:
                if a[0][0] != b[0][0]:
                    yield a + b

    def run(self, key, probe):
        """The probe's run on mutant ``key``, or None when its replacements do not combine."""
        if key not in self._classes:
            name = self.exercise.name
            variant = tuple(r for mistake_id, k in key for r in BY_ID[mistake_id].variants[name][k])
            tag = "+".join(f"{mistake_id}.{k}" for mistake_id, k in key)
            try:
                self._classes[key] = mutant_class(self.exercise, self.source, variant, tag)
            except AssertionError:
                self._classes[key] = None
        if self._classes[key] is None:
            return None
        if (key, probe.label) not in self._runs:
            self._runs[key, probe.label] = run_probe(probe, maker(self._classes[key]))
        return self._runs[key, probe.label]


def solution_source(name):
    return importlib.resources.files("normcore.practice.solutions").joinpath(f"{name}.py").read_text()


def apply_variant(source, variant):
    """The reference answer's source with each (line, replacement) of a variant applied once."""
    for old, new in variant:
        if source.count(old) != 1:
            raise AssertionError(f"a catalog line is not exactly once in the reference answer: {old!r}")
        source = source.replace(old, new)
    return source


def mutant_class(exercise, source, variant, tag):
    module = types.ModuleType(f"normcore.practice._mutant_{exercise.name}_{tag}")
    exec(compile(apply_variant(source, variant), f"<mutant {tag}>", "exec"), module.__dict__)
    return module.__dict__[exercise.class_name]


def _not_implemented(cls, exercise, path):
    """The methods of the user's class that still raise NotImplementedError (the skeleton's TODOs)."""
    todo = []
    x = np.random.default_rng(0).standard_normal(exercise.example_shape)
    for method in ("forward", "backward"):
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                layer = cls(*exercise.example_args)
                if method == "backward":
                    try:
                        layer.forward(x, *exercise.example_extra)
                    except Exception:  # noqa: BLE001 - only backward's own TODO matters here
                        pass
                getattr(layer, method)(*((x,) + exercise.example_extra if method == "forward"
                                         else (x,)))
        except NotImplementedError as e:
            if _raised_in(e, path, method):
                todo.append(method)
        except Exception:  # noqa: BLE001 - other problems are reported by the checks
            pass
    return todo


def _raised_in(exc, path, method):
    frame = _user_frame(exc, path)
    return frame is not None and frame.name == method


def grade(cls, exercise, path=None):
    """Grade a class as an exercise; returns a Report."""
    make_user = maker(cls)
    mutants = _Mutants.of(exercise)
    todo = _not_implemented(cls, exercise, path)
    checks = []
    for probe in exercise.probes:
        ref = mutants.reference(probe)
        if ref.error is not None:
            raise RuntimeError(f"the reference failed on probe {probe.label!r}") from ref.error
        user = run_probe(probe, make_user)
        probe_checks = []
        for label, r in ref.rows.items():
            if label in user.rows:
                u = user.rows[label].value
                err = distance(u, r.value, r.metric)
                status = "pass" if err <= r.tol else "FAIL"
                note = "" if status == "pass" else _mismatch_note(u, r.value)
                probe_checks.append(Check(probe.label, label, status, err, note))
            else:
                probe_checks.append(_unfinished(probe.label, label, user.error, path))
        failing = {c.row: c for c in probe_checks if c.status == "FAIL"}
        if failing:
            _diagnose(probe, ref, user, failing, mutants)
        if any(c.status in ("FAIL", "ERROR") and not c.backward for c in probe_checks):
            for c in failing.values():
                c.follows = c.backward and not c.diagnoses
        checks += probe_checks
    _keep_the_common_diagnosis(checks)
    return Report(str(path) if path else cls.__name__, cls.__name__, exercise, checks, todo)


def _keep_the_common_diagnosis(checks):
    """When one mistake explains every diagnosed failure, drop the others that only some
    probes cannot tell apart from it (e.g. a batch of one hides 1/b versus 1/1)."""
    solo = [c for c in checks if c.status == "FAIL" and c.diagnoses and not c.combined_with]
    if len(solo) < 2:
        return
    common = set.intersection(*(set(c.diagnoses) for c in solo))
    if common:
        for c in solo:
            c.diagnoses = [d for d in c.diagnoses if d in common]


def _unfinished(probe, row, error, path):
    """The check of an observation the user's layer never produced: why not."""
    if isinstance(error, NotApplicable):
        return Check(probe, row, "n/a", note=str(error))
    if isinstance(error, NotImplementedError):
        frame = _user_frame(error, path)
        return Check(probe, row, "TODO", note="not implemented yet" + (f" ({frame.name})" if frame else ""))
    if isinstance(error, ContractError):
        return Check(probe, row, "ERROR", note=str(error))
    return Check(probe, row, "ERROR", note=_describe(error, path) if error else "not recorded")


def _diagnose(probe, ref, user, failing, mutants):
    """Name the catalogued mistakes whose mutant reproduces the user's failing numbers.

    First a single mistake that reproduces every observation of the probe; then a pair of
    mistakes that does; otherwise, per failing check, every single mistake that reproduces it.
    """
    partial = {label: [] for label in failing}

    def agrees(run, label):
        m = run.rows.get(label)
        return m is not None and distance(user.rows[label].value, m.value, m.metric) <= m.tol

    def visible(run, label):  # the mistake reproduces this observation, which differs from the reference
        r = ref.rows[label]
        return agrees(run, label) and distance(run.rows[label].value, r.value, r.metric) > r.tol

    def explains(run):
        return (all(agrees(run, label) for label in user.rows)
                and any(visible(run, label) for label in failing))

    whole, pair = [], None
    for key in mutants.singles:
        run = mutants.run(key, probe)
        if explains(run):
            whole.append(key[0][0])
        for label in failing:
            if visible(run, label):
                partial[label].append(key[0][0])
    if not whole:
        for key in mutants.pairs():
            run = mutants.run(key, probe)
            if run is not None and explains(run):
                pair = [mistake_id for mistake_id, _ in key]
                break
    for label, check in failing.items():
        if pair:  # each check gets the mistake it shows alone, or both when it takes the two
            check.diagnoses = [i for i in pair if i in partial[label]] or pair
            check.combined_with = pair
        else:
            check.diagnoses = list(dict.fromkeys(whole or partial[label]))
        check.whole_probe = bool(whole or pair)


def grade_file(path, name=None, layer=None):
    """Load ``path``, find the class and grade it; raises CannotGrade with a clear message."""
    module = load_module(path)
    try:
        cls = find_class(module, name)
        return grade(cls, exercise_for(cls, layer), path)
    finally:
        sys.modules.pop(module.__name__, None)


# --- the printed report -------------------------------------------------------------------------
WIDTH = 80  # the printed report fits a terminal of 80 columns

NOTEBOOKS = {"batchnorm": "batchnorm", "layernorm": "layernorm", "rmsnorm": "rmsnorm",
             "groupnorm": "groupnorm_instancenorm", "dropout": "dropout"}
INTERVIEW_SECTIONS = {"softmax": "9.1", "log_softmax": "9.2", "cross_entropy": "9.2",
                      "attention": "9.3", "transformer_block": "9.4"}
EXPLAINED = ("batchnorm", "layernorm", "rmsnorm")  # the norms `normcore explain` steps through

FORWARD_HINTS = {
    "batchnorm": "BatchNorm standardises each channel over the batch (and length) axes with "
                 "the batch's biased mean and variance in training, and with running_mean "
                 "and running_var in evaluation.",
    "layernorm": "LayerNorm standardises each sample over its last len(normalized_shape) "
                 "axes: x_hat = (x - mean) / sqrt(var + eps), biased var, then gamma and beta.",
    "rmsnorm": "RMSNorm only rescales: x_hat = x / sqrt(mean(x**2) + eps) over the "
               "normalised axes of each sample, then gamma; no mean, no beta.",
    "groupnorm": "GroupNorm is LayerNorm on groups of C / G contiguous channels: reshape "
                 "(N, C, ...) to (N, G, -1), standardise the last axis, reshape back.",
    "dropout": "Inverted dropout zeroes each unit with probability p in training and scales "
               "the kept ones by 1 / (1 - p); in evaluation it returns its input.",
    "softmax": "Softmax along the axis: y = exp(x - max(x)) / sum(exp(x - max(x))), the max "
               "and the sum taken along self.axis with keepdims.",
    "cross_entropy": "Cross-entropy is the mean over the N rows of -logp[n, y_n], with logp the "
                     "log-softmax over the classes (axis 1): z - log(sum(exp(z))), z = x - max(x).",
    "log_softmax": "Log-softmax along the axis: logp = z - log(sum(exp(z))) with z = x - max(x), "
                   "the max and the sum along self.axis with keepdims; never log(softmax(x)).",
    "attention": "Self-attention: q, k, v = x @ wq, x @ wk, x @ wv split into heads (B, T, H, D) "
                 "-> (B, H, T, D); attn = softmax(q k^T / sqrt(D)) over the keys, with -inf "
                 "above the diagonal before it when causal; y = merge(attn v) @ wo.",
    "mlp_with_batchnorm": "The forward is h = x @ w1 + b1, BatchNorm over the batch axis with the "
                          "batch's biased variance, a = tanh(hbn), logits = a @ w2 + b2, then "
                          "the mean cross-entropy: work it through one layer at a time.",
    "transformer_block": "Pre-Norm is y = x + F(LN(x)), Post-Norm y = LN(x + F(x)), with "
                         "F(h) = relu(h @ w1 + b1) @ w2 + b2 and LN LayerNorm over the last "
                         "axis (biased variance, eps inside the square root).",
}
DX_HINTS = {
    "mean-var": "Derive dx through every path from x to the output (x_hat, the mean and the "
                "variance); a mean-and-variance norm's dx sums to zero over the normalised "
                "axes and is orthogonal to x_hat (up to eps).",
    "rmsnorm": "RMSNorm's dx has two paths, the direct one and the one through the RMS: "
               "dx = rrms * (dx_hat - x_hat * mean(dx_hat * x_hat)); it is orthogonal to "
               "x_hat (up to eps) but need not sum to zero.",
    "dropout": "Dropout's backward reuses the forward's mask and scale: dx = dy * mask / "
               "(1 - p) in training, dx = dy in evaluation.",
    "softmax": "Softmax's dx goes through its whole Jacobian: dx = y * (dy - sum(dy * y)) "
               "along the axis; it sums to zero along the axis.",
    "cross_entropy": "The fused gradient is dlogits = dloss * (softmax(x) - onehot(y)) / N; "
                     "each row sums to zero.",
    "log_softmax": "Log-softmax's Jacobian is d logp_i / d x_j = [i == j] - p_j, so dx = dy - "
                   "p * sum(dy) along the axis, p = exp(logp); it sums to zero along the axis.",
    "attention": "Go back node by node: dattn = dout v^T and dv = attn^T dout; dscores = "
                 "attn * (dattn - sum(dattn * attn)) over the keys; dq = dscores k / sqrt(D), "
                 "dk = dscores^T q / sqrt(D); dx sums the shares of q, k and v.",
    "mlp_with_batchnorm": "Go node by node from the top, each gradient from the one above it: "
                          "dlogits, da, dhbn, dh through BatchNorm's three paths, then "
                          "dx = dh @ w1.T. Check the first failing gradient in that order; a "
                          "weight's gradient is its input's transpose times the node's gradient.",
    "transformer_block": "A residual add sends the gradient down both paths and the chain rule "
                         "adds them: Pre-Norm dx = dy + LN'(F'(dy)); Post-Norm dz = LN'(dy), "
                         "then dx = dz + F'(dz); G' is G's whole backward (ReLU's mask, "
                         "LayerNorm's mean and variance terms).",
}
WEIGHT_HINTS = {  # the gradients of weights and biases other than gamma and beta
    "transformer_block": "A weight's gradient is its input, transposed, times the gradient at "
                         "its output, summed over every row: dw2 = relu(a)^T dg, dw1 = h^T da; "
                         "a bias's gradient is the gradient at its output summed over the rows.",
}
RMS_DEFAULT_EPS = ("RMSNorm(eps=None) means the machine epsilon of the input's dtype, "
                   "np.finfo(x.dtype).eps, not 1e-5 or 1e-6.")
FORWARD_FIRST = ("Fix the forward first: the backward checks of a probe whose forward "
                 "fails are graded against the right forward, so they fail with it even "
                 "when the backward is consistent with yours.")


def _teaching(exercise, backward):
    """Where normcore teaches the part of ``exercise`` that failed."""
    if exercise not in NOTEBOOKS:  # the reference answer's derivation (and section 9's facts)
        section = INTERVIEW_SECTIONS.get(exercise)
        also = f", and notebooks/interview_practice.ipynb, section {section}" if section else ""
        return f"normcore practice solution {exercise} (the derivation in its docstring){also}"
    notebook = f"notebooks/{NOTEBOOKS[exercise]}.ipynb"
    if backward:
        explain = f"normcore explain {exercise}, or " if exercise in EXPLAINED else ""
        return f"{explain}{notebook}, sections 4 and 5 (the backward)"
    return f"{notebook}, sections 2 and 3 (the formulas, the forward)"


def _generic_hints(exercise, checks):
    """Hints for failures no catalogued mistake explains: about this exercise and about what
    failed, the forward before the backward."""
    rows = [c.row.rpartition(": ")[2] for c in checks]
    forward = [c for c in checks if not c.backward]
    hints = []
    if forward:
        if len(forward) < len(checks):
            hints.append(FORWARD_FIRST)
        if exercise == "rmsnorm" and any(c.probe.startswith("default eps") for c in forward):
            hints.append(RMS_DEFAULT_EPS)
        if any("dtype" in r for r in rows):
            hints.append("Return y in the input's dtype: compute, then cast the result back "
                         "once at the end.")
        if any(r.startswith("running") for r in rows):
            hints.append("Check the running-average update step by step on one channel: "
                         "which batch statistic goes in, with which weight.")
        hints.append(FORWARD_HINTS[exercise])
        hints.append("Work one tiny input (2 x 3) through your forward by hand and compare it "
                     "with normcore's layer.")
        return hints
    if any(r.endswith("dtype") for r in rows):
        hints.append("dx has the input's dtype and each parameter's gradient the parameter's "
                     "dtype: cast dx back once at the end, and add into .grad in place.")
    values = [r for r in rows if not r.endswith("dtype")]
    if any(r.startswith(("dx", "dlogits")) or "gradients" in r for r in values):
        kind = exercise if exercise in DX_HINTS else "mean-var"
        hints.append(DX_HINTS[kind])
    once = {r.partition(" ")[0] for r in values if "after two" not in r}  # wrong after one backward
    if any("after two backward" in r and r.partition(" ")[0] not in once for r in rows):
        hints.append("Parameter gradients accumulate: add into .grad (+=), never assign.")
    elif any(r.startswith("dgamma") for r in values):
        hints.append("gamma's gradient is the sum of dy * x_hat over every axis gamma is "
                     "broadcast over, one entry per parameter.")
    if any(r.startswith("dbeta") and "after two" not in r for r in values):
        hints.append("beta's gradient is the sum of dy over every axis beta is broadcast over.")
    names = {r.partition(" ")[0] for r in values}
    if exercise in WEIGHT_HINTS and any(n.startswith(("dw", "db")) and n != "dbeta" for n in names):
        hints.append(WEIGHT_HINTS[exercise])
    return hints


def _collapse(checks):
    """Table rows (probe, row, status, error, how sure, note): a probe whose remaining checks
    all stopped for the same reason becomes one row."""
    rows, i = [], 0
    while i < len(checks):
        c = checks[i]
        j = i
        while (j + 1 < len(checks) and checks[j + 1].probe == c.probe
               and c.status in ("TODO", "ERROR", "n/a")
               and (checks[j + 1].status, checks[j + 1].note) == (c.status, c.note)):
            j += 1
        if j > i:
            rows.append((c.probe, f"{j - i + 1} checks", c.status, None, "", c.note))
        else:
            rows.append((c.probe, c.row, c.status, c.error, c.confidence, _cell(c)))
        i = j + 1
    return rows


def _cell(check):
    """The diagnosis column: the mistake(s), or a note on why the check did not pass."""
    if check.diagnoses:
        return " + ".join(check.diagnoses)
    if check.follows:
        return "the forward fails first" + (f"; {check.note}" if check.note else "")
    if check.status == "FAIL":
        return "no catalogued mistake" + (f"; {check.note}" if check.note else "")
    return check.note


def _wrap(text, indent, width=WIDTH):
    return textwrap.fill(text, width=width, initial_indent=indent, subsequent_indent=indent,
                         break_on_hyphens=False)


def _table(rows):
    """The checks grouped by probe, at most WIDTH columns; long cells wrap in their column."""
    name_w, note_at = 18, 50
    out = [f"{'check':<{name_w + 2}}  {'result':<6}  {'vs ref':>6}  {'how sure':<10}  "
           "diagnosis / note", "-" * WIDTH]
    probe = None
    for this_probe, row, status, err, how, note in rows:
        if this_probe != probe:
            out.append(_wrap(this_probe, ""))
            probe = this_probe
        err_text = "" if err is None else ("inf" if not np.isfinite(err) else f"{err:.0e}")
        names = textwrap.wrap(row, name_w, break_on_hyphens=False) or [""]
        notes = textwrap.wrap(note or "", WIDTH - note_at, break_on_hyphens=False,
                              break_long_words=False)
        if len(notes) > 3:
            notes = notes[:2] + [notes[2][:WIDTH - note_at - 3] + "..."]
        lines = max(len(names), len(notes))
        names += [""] * (lines - len(names))
        notes += [""] * (lines - len(notes))
        for k in range(lines):
            cells = (status, err_text, how) if k == 0 else ("", "", "")
            out.append(f"  {names[k]:<{name_w}}  {cells[0]:<6}  {cells[1]:>6}  {cells[2]:<10}  "
                       f"{notes[k]}".rstrip())
    out.append("-" * WIDTH)
    return out


def reference_name(exercise):
    """normcore's layer the exercise is graded against; an adapter in ``references.py`` says
    which layers it chains (``built_from``)."""
    built_from = getattr(exercise.reference, "built_from", None)
    return f"normcore's {built_from}" if built_from else f"normcore.{exercise.reference.__name__}"


def format_report(report):
    """The report as printed by ``normcore practice check``: at most 80 columns wide."""
    ex = report.exercise
    out = [_wrap(f"Grading {report.class_name} from {report.file} as the {ex.name} exercise "
                 f"(reference: {reference_name(ex)})", ""), ""]
    out += _table(_collapse(report.checks))
    counts = {s: sum(c.status == s for c in report.checks)
              for s in ("pass", "FAIL", "ERROR", "TODO", "n/a")}
    out.append(f"{len(report.checks)} checks: "
               + ", ".join(f"{n} {s}" for s, n in counts.items() if n))
    if report.not_implemented:
        out.append(f"Not implemented yet: {', '.join(report.not_implemented)} "
                   "(the TODOs of the skeleton).")
    failing = [c for c in report.checks if c.status == "FAIL"]
    if failing:
        out += ["", "Diagnosis"]
        if report.diagnosis_ids:
            out[-1] += (" (reproduces: the mistake gives every number of the probe; matches: "
                        "it\ngives the failing number)")
        for mistake_id in report.diagnosis_ids:
            mistake = BY_ID[mistake_id]
            hits = [c for c in failing if mistake_id in c.diagnoses]
            how = "reproduces" if all(c.whole_probe for c in hits) else "matches"
            others = sorted({i for c in hits for i in c.combined_with} - {mistake_id})
            together = f" (together with {', '.join(others)})" if others else ""
            out.append(_wrap(f"[{mistake.id}] {mistake.title}", "  "))
            out.append(_wrap(f"{how} your numbers{together} in {len(hits)} failing check(s), "
                             f"e.g. {hits[0].label}", "    "))
            out.append(_wrap(f"symptom: {mistake.symptom}", "    "))
            out.append(_wrap(f"hint: {mistake.hint}", "    "))
            out.append(_wrap(f"learn: {mistake.taught_in}", "    "))
        follows = [c for c in failing if c.follows]
        unexplained = [c for c in failing if not c.diagnoses and not c.follows]
        if follows and all(c.backward for c in unexplained):  # else a hint says it
            out.append(_wrap(f"{len(follows)} backward check(s) fail in probes whose forward "
                             "fails; fix the forward first, then grade again.", "  "))
        if unexplained:
            out.append(f"  No catalogued mistake produces your numbers in {len(unexplained)} "
                       "failing check(s):")
            for c in unexplained[:6]:
                out.append(_wrap(c.label + (f" ({c.note})" if c.note else ""), "    "))
            if len(unexplained) > 6:
                out.append(f"    ... and {len(unexplained) - 6} more")
            hints = _generic_hints(ex.name, unexplained + follows)
            for hint in hints:
                out.append(_wrap(f"hint: {hint}", "    "))
            backward = all(c.backward for c in unexplained)
            out.append(_wrap(f"learn: {_teaching(ex.name, backward)}", "    "))
    errors = [c for c in report.checks if c.status == "ERROR"]
    if errors:
        out += ["", _wrap(f"Your layer raised an error in {len(errors)} check(s); the first: "
                          f"{errors[0].note}", "")]
    out += ["", "All checks pass." if report.passed else "Not all checks pass yet."]
    return "\n".join(out)
