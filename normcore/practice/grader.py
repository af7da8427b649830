"""The practice grader: run every probe on the candidate's class and on normcore's, compare,
diagnose, report.

For each probe the same inputs go to normcore's own layer (the reference) and to the user's
class; every recorded observation becomes one check. When checks fail, the catalogued
mistakes' mutants run the same probe and name the mistake whose numbers the user's numbers
match (``diagnosis.py``). The user's source is never read; only their numbers are compared.
The forward comes before the backward: a backward failure no mistake explains, in a probe
whose forward fails, is reported as following from the forward.

The jobs live apart: ``loading`` (import the file, find the class and its exercise),
``probes`` (run one probe, compare observations), ``mutants`` and ``diagnosis`` (the
catalogued mistakes that reproduce a failure), ``report`` (the printed report). The names
they had here stay importable from this module.
"""

import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import torch_track
from .diagnosis import diagnose, keep_common_diagnosis
from .driver import ContractError, NotApplicable
from .loading import (CannotGrade, describe_error, exercise_for, find_class, load_module,
                      user_frame)
from .mutants import Mutants, VariantDoesNotApply, apply_variant, mutant_class, solution_source
from .probes import distance, is_backward, maker, mismatch_note, run_probe
from .report import format_report, reference_name

__all__ = ["CannotGrade", "CheckResult", "Report", "grade", "grade_file", "format_report",
           "reference_name", "load_module", "find_class", "exercise_for", "run_probe",
           "distance", "apply_variant", "mutant_class", "solution_source", "VariantDoesNotApply"]


@dataclass
class CheckResult:
    """The outcome of one check of a graded file (a row of one probe), with its diagnoses."""

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


def _not_implemented(cls, exercise, path):
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
    frame = user_frame(exc, path)
    return frame is not None and frame.name == method


def grade(cls, exercise, path=None, track=None):
    """Grade a class as an exercise; returns a Report. ``track`` drives a class written to
    another contract (``torch_track.TRACK`` for a torch.nn.Module); None for NumPy's."""
    make_user = track.maker(cls) if track else maker(cls)
    mutants = track.mutants(exercise) if track else Mutants.of(exercise)
    todo = track.not_implemented(cls, exercise, path) if track else _not_implemented(cls, exercise, path)
    checks = []
    for probe in track.probes(exercise) if track else exercise.probes:
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
                note = "" if status == "pass" else mismatch_note(u, r.value)
                probe_checks.append(CheckResult(probe.label, label, status, err, note))
            else:
                probe_checks.append(_unfinished(probe.label, label, user.error, path))
        failing = {c.row: c for c in probe_checks if c.status == "FAIL"}
        if failing:
            diagnose(probe, ref, user, failing, mutants)
        if any(c.status in ("FAIL", "ERROR") and not c.backward for c in probe_checks):
            for c in failing.values():
                c.follows = c.backward and not c.diagnoses
        checks += probe_checks
    keep_common_diagnosis(checks)
    return Report(str(path) if path else cls.__name__, cls.__name__, exercise, checks, todo)


def _unfinished(probe, row, error, path):
    """The check of an observation the user's layer never produced: why not."""
    if isinstance(error, NotApplicable):
        return CheckResult(probe, row, "n/a", note=str(error))
    if isinstance(error, NotImplementedError):
        frame = user_frame(error, path)
        where = f" ({frame.name})" if frame else ""
        return CheckResult(probe, row, "TODO", note="not implemented yet" + where)
    if isinstance(error, ContractError):
        return CheckResult(probe, row, "ERROR", note=str(error))
    return CheckResult(probe, row, "ERROR", note=describe_error(error, path) if error else "not recorded")


def grade_file(path, name=None, layer=None):
    """Load ``path``, find the class and grade it; raises CannotGrade with a clear message."""
    module = load_module(path)
    try:
        cls = find_class(module, name)
        return grade(cls, exercise_for(cls, layer), path, torch_track.track_for(cls))
    finally:
        sys.modules.pop(module.__name__, None)
