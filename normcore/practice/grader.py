"""The practice grader: run every probe on the candidate's class and on normcore's, compare,
diagnose, report.

For each probe the same inputs go to normcore's own layer (the reference) and to the user's
class; every recorded observation becomes one check. When checks fail (or raise), the
catalogued mistakes' mutants run the same probes, and a mistake is named only when its
mutant gives every number of every probe as the user's class does (``diagnosis.py``). The
user's source is never read; only their numbers are compared.
The forward comes before the backward: a backward failure no mistake explains, in a probe
whose forward fails, is reported as following from the forward. A forward-only answer (asked
for, ``FORWARD_ONLY = True`` in the file, or a class with no backward) is graded on the
forward's observations; the backward's checks are "not asked", which counts as passing.

The jobs live apart: ``loading`` (import the file, find the class and its exercise),
``probes`` (run one probe, compare observations), ``mutants`` and ``diagnosis`` (the
catalogued mistakes that reproduce a failure), ``report`` (the printed report). The names
they had here stay importable from this module.
"""

import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import torch_track, verdicts
from ..i18n import N_, translator
from .diagnosis import diagnose
from .driver import ContractError, NotApplicable
from .loading import (CannotGrade, describe_error, exercise_for, find_class, load_module,
                      user_frame)
from .mutants import Mutants, VariantDoesNotApply, apply_variant, mutant_class, solution_source
from .probes import distance, is_backward, maker, mismatch_note, run_probe
from .report import NOT_ASKED, format_report, reference_name

__all__ = ["CannotGrade", "CheckResult", "Report", "grade", "grade_file", "format_report",
           "reference_name", "load_module", "find_class", "exercise_for", "run_probe",
           "distance", "apply_variant", "mutant_class", "solution_source", "VariantDoesNotApply"]

_ = translator("practice")


@dataclass
class CheckResult:
    """The outcome of one check of a graded file (a row of one probe), with its diagnoses."""

    probe: str
    row: str
    status: str  # "pass", "FAIL", "TODO" (not implemented yet), "ERROR" (raised), "n/a",
                 # "not asked" (the backward of a forward-only answer)
    error: float = None  # distance to the reference
    note: str = ""
    diagnoses: list = field(default_factory=list)  # catalog ids
    combined_with: list = field(default_factory=list)  # the mistakes, when several explain it
    constants: dict = field(default_factory=dict)  # {mistake id: (Constant, value)} it was found with
    follows: bool = False  # an undiagnosed backward failure in a probe whose forward fails

    @property
    def confidence(self):
        """'reproduces' when a mistake is named (its mutant, or a combination's, gives every
        number of every probe as the user's class does), '' when none is."""
        return "reproduces" if self.diagnoses else ""

    @property
    def backward(self):
        return is_backward(self.row)

    @property
    def label(self):
        return f"{self.probe}: {self.row}"


PASSING = ("pass", "n/a", NOT_ASKED)  # the statuses that count as passed


@dataclass
class Report:
    file: str
    class_name: str
    exercise: object
    checks: list
    not_implemented: list  # method names still raising NotImplementedError
    forward_only: str = ""  # why only the forward was graded ("" when both were)
    findings: list = field(default_factory=list)  # verdicts.Finding: failures of their own
    float32_inside: float = None  # the float64 error of an answer computing in float32 inside

    @property
    def passed(self):
        return all(c.status in PASSING for c in self.checks)

    @property
    def diagnosis_ids(self):
        """The catalog ids the diagnosis named: ``mistake_ids`` and ``variants``."""
        return sorted({d for c in self.checks for d in c.diagnoses})

    @property
    def mistake_ids(self):
        """The catalogued mistakes named: what is counted as a mistake."""
        return verdicts.split_named(self.diagnosis_ids, self.exercise)[0]

    @property
    def variants(self):
        """The published variants named: not what the exercise asks, and never a mistake."""
        return verdicts.split_named(self.diagnosis_ids, self.exercise)[1]

    @property
    def constants(self):
        """{mistake id: (Constant, value)}: the constant (an eps, a momentum) each named mistake
        was found with, where the probes pin it down (``constants.py``)."""
        return {i: found for c in self.checks for i, found in c.constants.items()}


def _not_implemented(cls, exercise, path, methods=("forward", "backward")):
    """The methods of the user's class that still raise NotImplementedError (the skeleton's TODOs)."""
    todo = []
    if exercise.function:  # a function: called once on the example arguments
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cls(*exercise.example_args)
        except NotImplementedError as e:
            if _raised_in(e, path, exercise.class_name):
                todo.append(exercise.class_name)
        except Exception:  # noqa: BLE001 - other problems are reported by the checks
            pass
        return todo
    x = np.random.default_rng(0).standard_normal(exercise.example_shape)
    for method in methods:
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
    frame = user_frame(exc, path)
    return frame is not None and frame.name == method


def grade(cls, exercise, path=None, forward_only=False, track=None):
    """Grade a class as an exercise; returns a Report. ``forward_only`` (True, or the reason
    the report gives) grades the forward alone: the backward's checks are "not asked".
    ``track`` drives a class written to another contract (``torch_track.TRACK`` for a
    torch.nn.Module, whose gradients come from autograd); None for NumPy's."""
    if forward_only and exercise.function:
        raise CannotGrade(_("{name} is a function with no backward: the whole exercise is its "
                            "forward, so forward-only grading does not apply (grade it without "
                            "--forward-only or FORWARD_ONLY)").format(name=exercise.name))
    if forward_only is True:
        forward_only = N_("the forward alone was asked")  # the reasons: translated where shown
    if track:
        make_user, mutants = track.maker(cls), track.mutants(exercise)
        todo, probes = track.not_implemented(cls, exercise, path), track.probes(exercise)
    else:
        make_user, mutants = maker(cls, bool(forward_only)), Mutants.of(exercise)
        todo = _not_implemented(cls, exercise, path, ("forward",) if forward_only else
                                ("forward", "backward"))
        probes = exercise.probes
    checks, users = [], {}
    for probe in probes:
        ref = mutants.reference(probe)
        if ref.error is not None:
            raise RuntimeError(f"the reference failed on probe {probe.label!r}") from ref.error
        user = run_probe(probe, make_user)
        if forward_only:  # the backward's observations are neither graded nor diagnosed
            user.rows = {k: v for k, v in user.rows.items() if not is_backward(k)}
        users[probe.label] = user
        checks += _checks(probe.label, ref, user, path, forward_only)
    diagnose(probes, users, checks, mutants, bool(forward_only))
    report = verdicts.settle(Report(str(path) if path else cls.__name__, cls.__name__, exercise,
                                    checks, todo, forward_only or ""),
                             probes, users, mutants, bool(forward_only))
    _follow_the_forward(checks)
    return report


def _checks(probe, ref, user, path, forward_only=False):
    """One check per observation of the reference: the user's against it (a backward one is
    "not asked" in a forward-only grade)."""
    checks = []
    for label, r in ref.rows.items():
        if forward_only and is_backward(label):
            checks.append(CheckResult(probe, label, NOT_ASKED, note=_("forward only")))
        elif label in user.rows:
            u = user.rows[label].value
            err = distance(u, r.value, r.metric, r.scale)
            status = "pass" if err <= r.tol else "FAIL"
            note = "" if status == "pass" else mismatch_note(u, r.value)
            checks.append(CheckResult(probe, label, status, err, note))
        else:
            checks.append(_unfinished(probe, label, user.error, path))
    return checks


def _follow_the_forward(checks):
    """Mark the undiagnosed backward failures of the probes whose forward fails or raises."""
    broken = {c.probe for c in checks if c.status in ("FAIL", "ERROR") and not c.backward}
    for c in checks:
        c.follows = c.status == "FAIL" and c.backward and not c.diagnoses and c.probe in broken


def _unfinished(probe, row, error, path):
    """The check of an observation the user's layer never produced: why not."""
    if isinstance(error, NotApplicable):
        return CheckResult(probe, row, "n/a", note=str(error))
    if isinstance(error, NotImplementedError):
        frame = user_frame(error, path)
        note = (_("not implemented yet ({method})").format(method=frame.name) if frame
                else _("not implemented yet"))
        return CheckResult(probe, row, "TODO", note=note)
    if isinstance(error, ContractError):
        return CheckResult(probe, row, "ERROR", note=str(error))
    return CheckResult(probe, row, "ERROR", note=describe_error(error, path) if error else _("not recorded"))


def grade_file(path, name=None, layer=None, forward_only=False):
    """Load ``path``, find the class and grade it; raises CannotGrade with a clear message.
    The forward alone is graded when ``forward_only`` asks for it, when the file says
    ``FORWARD_ONLY = True``, or when its class has no backward method."""
    module = load_module(path)
    try:
        cls = find_class(module, name, layer)
        exercise = exercise_for(cls, layer)
        track = torch_track.track_for(cls)
        if forward_only is True:
            forward_only = "--forward-only"
        elif getattr(module, "FORWARD_ONLY", False) is True:
            forward_only = N_("FORWARD_ONLY = True in the file")
        elif not track and not exercise.function and not callable(getattr(cls, "backward", None)):
            forward_only = N_("the class has no backward method")
        return grade(cls, exercise, path, forward_only, track)
    finally:
        sys.modules.pop(module.__name__, None)
