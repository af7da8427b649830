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
Likewise a training-only BatchNorm (asked for, ``NO_RUNNING_STATS = True`` in the file, or a
layer with neither ``running_mean`` nor ``running_var``) is graded on the rest: the checks of
the running statistics and of evaluation are "not written", which counts as passing too.

A candidate's file runs apart from the grader (``sandbox``): a child process loads it and
runs the probes on its class under a time, memory and output limit, and sends back the
observations; the reference, the mutants and the diagnosis run here (``assess``). A class
given directly (``grade``) is trusted code and runs in this process.

The jobs live apart: ``loading`` (import the file, find the class and its exercise),
``tracks`` (the ``Exam`` of an exercise on the answer's track, NumPy's or PyTorch's: the one
place that knows of tracks), ``runs`` (the answer's run), ``sandbox`` (the child process),
``probes`` (run one probe, compare observations), ``mutants`` and ``diagnosis`` (the
catalogued mistakes that reproduce a failure), ``report`` (the printed report). The names
they had here stay importable from this module.
"""

from dataclasses import dataclass, field

from . import tracks, verdicts
from ..i18n import translator
from .diagnosis import Graded, diagnose, partly
from .driver import ContractError, NotApplicable
from .loading import (CannotGrade, describe_error, exercise_for, find_class, load_module,
                      user_frame)
from .mutants import VariantDoesNotApply, apply_variant, mutant_class, solution_source
from .probes import distance, is_backward, mismatch_note, run_probe
from .exercises import is_running_statistics
from .report import NOT_ASKED, NOT_WRITTEN, format_report, reference_name
from .runs import Stopped, run_answer
from .sandbox import Limits, run_file

__all__ = ["CannotGrade", "CheckResult", "Limits", "Report", "assess", "grade", "grade_file",
           "format_report",
           "reference_name", "load_module", "find_class", "exercise_for", "run_probe",
           "distance", "apply_variant", "mutant_class", "solution_source", "VariantDoesNotApply"]

_ = translator("practice")


@dataclass
class CheckResult:
    """The outcome of one check of a graded file (a row of one probe), with its diagnoses."""

    probe: str
    row: str
    status: str  # "pass", "FAIL", "TODO" (not implemented yet), "ERROR" (raised), "n/a",
                 # "not asked" (the backward of a forward-only answer), "not written" (the
                 # running statistics of a training-only answer)
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


PASSING = ("pass", "n/a", NOT_ASKED, NOT_WRITTEN)  # the statuses that count as passed


@dataclass
class Report:
    file: str
    class_name: str
    exercise: object
    checks: list
    not_implemented: list  # method names still raising NotImplementedError
    forward_only: str = ""  # why only the forward was graded ("" when both were)
    no_running_stats: str = ""  # why the running statistics were not graded ("" when they were)
    stopped: str = ""  # what stopped the answer's process early ("" when nothing did)
    output: str = ""  # the first lines the answer printed while it was graded from its file
    findings: list = field(default_factory=list)  # verdicts.Finding: failures of their own
    float32_inside: float = None  # the float64 error of an answer computing in float32 inside
    partly: list = field(default_factory=list)  # [(mistake id, [checks])]: unsure, no diagnosis

    @property
    def passed(self):
        return not self.stopped and all(c.status in PASSING for c in self.checks)

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


def grade(cls, exercise, path=None, forward_only=False, track=None, no_running_stats=False):
    """Grade a class as an exercise, in this process (a class given directly is trusted code:
    a test's, a notebook's); returns a Report. ``forward_only`` (True, or the reason the
    report gives) grades the forward alone: the backward's checks are "not asked";
    ``no_running_stats`` likewise grades a BatchNorm without its running statistics (also
    when its layer has none): their checks are "not written". ``track`` (a track or its name,
    ``tracks.TRACKS``) drives a class written to another contract; by default the one
    ``tracks.track_for`` chooses."""
    exam = tracks.exam(track or cls, exercise)
    answer = run_answer(cls, exercise, path, exam, forward_only=forward_only,
                        no_running_stats=no_running_stats)
    return assess(answer, exercise, path)


def grade_file(path, name=None, layer=None, forward_only=False, limits=None):
    """Load ``path`` in a child process, find the class and grade it (``sandbox.run_file``,
    under ``limits``: ``sandbox.Limits()`` by default); raises CannotGrade with a clear
    message. The forward alone is graded when ``forward_only`` asks for it, when the file
    says ``FORWARD_ONLY = True``, or when its class has no backward method."""
    answer, exercise = run_file(path, name, layer, forward_only, limits)
    return assess(answer, exercise, path)


def assess(answer, exercise, path=None):
    """The Report of an answer's runs (``runs.Answer``): each against the reference's, one
    check per observation, then the diagnosis. The reference and the mutants (the ``Exam``
    of the answer's track) run here."""
    exam = tracks.exam(answer.track, exercise)
    mutants, probes = exam.mutants(), exam.probes
    checks, users = [], {}
    for probe in probes:
        ref = mutants.reference(probe)
        if ref.error is not None:
            raise RuntimeError(f"the reference failed on probe {probe.label!r}") from ref.error
        users[probe.label] = user = answer.run(probe.label)
        checks += _checks(probe.label, ref, user, path, answer.forward_only,
                          answer.no_running_stats)
    graded = Graded(bool(answer.forward_only), bool(answer.no_running_stats))
    diagnose(probes, users, checks, mutants, graded)
    report = verdicts.settle(Report(str(path) if path else answer.class_name, answer.class_name,
                                    exercise, checks, answer.todo, answer.forward_only,
                                    answer.no_running_stats, answer.stopped, answer.output),
                             probes, users, mutants, graded)
    _follow_the_forward(checks)
    report.partly = partly(probes, users, checks, mutants, graded)
    if answer.stopped and not answer.stopped_in:  # after the probes: while looking for TODOs
        checks.append(CheckResult(_("the skeleton's TODOs"), "", "ERROR", note=answer.stopped))
        report.float32_inside = None  # the answer did not finish: nothing to excuse
    return report


def _checks(probe, ref, user, path, forward_only=False, no_running_stats=False):
    """One check per observation of the reference: the user's against it (a backward one is
    "not asked" in a forward-only grade, one of the running statistics "not written" in a
    training-only grade)."""
    checks = []
    for label, r in ref.rows.items():
        if no_running_stats and is_running_statistics(probe, label):
            checks.append(CheckResult(probe, label, NOT_WRITTEN, note=_("training only")))
        elif forward_only and is_backward(label):
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
    if isinstance(error, Stopped):  # what stopped the process (or that it stopped before)
        return CheckResult(probe, row, "ERROR", note=str(error))
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
