"""An answer's run: what of it is graded, the probes on it, its skeleton's TODOs.

The run is the same in the child process ``sandbox`` forks for a file and, for a class given
directly (trusted code: a test's, a notebook's), in the grader's own process
(``grader.grade``). It knows the answer's track only through the track's ``Exam`` of the
exercise (``tracks.exam``): the probes to run, how to drive the answer, whether its backward
is written by hand. Every track's answer is scoped, run and searched for TODOs by the same
code, so that neither the grader, the diagnosis nor the report asks which track it is on.
"""

import warnings
from dataclasses import dataclass, field

import numpy as np

from ..distributed import InProcessGroup
from ..i18n import N_, translator
from .driver import NotApplicable
from .exercises import RUNNING_PROBE, RUNNING_STATISTICS, is_running_statistics
from .loading import CannotGrade, user_frame
from .probes import ProbeRun, is_backward, run_probe

_ = translator("practice")


@dataclass(frozen=True)
class Exam:
    """What a track gives for one exercise (``tracks.exam``): the one interface between the
    grader and the tracks.

    - ``track``: the track's name (how the child process names it to the grader);
    - ``probes``: the probes every answer on the track runs;
    - ``maker(cls, forward_only=False)``: make(*args, **kwargs) -> a driver around a fresh
      instance of the answer (with ``forward_only``, one whose backward is never called);
    - ``backward_by_hand``: whether the answer writes its own backward (a class without one
      is then graded on its forward alone);
    - ``mutants()``: the reference and the catalogued mutants (``mutants.Mutants``), built
      when the grader first asks, once per process.
    """

    track: str
    probes: tuple
    maker: object
    backward_by_hand: bool
    mutants: object


@dataclass
class Answer:
    """What the answer did on every probe, as the grader grades it (``grader.assess``)."""

    class_name: str
    forward_only: str = ""  # why only the forward is graded ("" when both are)
    no_running_stats: str = ""  # why the running statistics are not graded ("" when they are)
    runs: dict = field(default_factory=dict)  # probe label -> ProbeRun, in the probes' order
    todo: list = field(default_factory=list)  # methods still raising NotImplementedError
    stopped: str = ""  # what stopped the process early ("timed out after 5 s in forward, ...")
    stopped_in: str = ""  # the probe it stopped in ("" when it stopped after the probes)
    output: str = ""  # the first lines it printed
    track: str = "numpy"  # the name of the track it was run on (``Exam.track``)

    def run(self, label):
        """The run of probe ``label``; one that says it was not run when the process stopped
        in an earlier probe."""
        if label not in self.runs and self.stopped:
            return ProbeRun({}, NotRun(_("not run: the process stopped in an earlier probe")))
        return self.runs[label]


class Stopped(Exception):
    """The run of the probe the answer's process stopped in; the message says what happened."""


class NotRun(Stopped):
    """A probe that was not run: the answer's process stopped in an earlier one."""


# --- the answer's run: in the child, or in the grader's process for a trusted class -----------
def forward_only_reason(exercise, forward_only):
    """Why the forward alone is graded ("" when both are): ``forward_only`` (True, or the
    reason the report gives). A function has no backward to leave out: CannotGrade."""
    if forward_only and exercise.function:
        raise CannotGrade(_("{name} is a function with no backward: the whole exercise is its "
                            "forward, so forward-only grading does not apply (grade it without "
                            "--forward-only or FORWARD_ONLY)").format(name=exercise.name))
    if forward_only is True:
        return N_("the forward alone was asked")  # the reasons: translated where shown
    return forward_only or ""


def _reason_in_file(module, cls, exercise, exam, forward_only):
    """Why the forward alone is graded, for a class loaded from a file: asked for
    (``--forward-only``), ``FORWARD_ONLY = True`` in the file, or a class on a track whose
    backward is written by hand that has no backward method."""
    if forward_only is True:
        forward_only = "--forward-only"
    elif getattr(module, "FORWARD_ONLY", False) is True:
        forward_only = N_("FORWARD_ONLY = True in the file")
    elif (exam.backward_by_hand and not exercise.function
          and not callable(getattr(cls, "backward", None))):
        forward_only = N_("the class has no backward method")
    return forward_only_reason(exercise, forward_only)


def no_running_stats_reason(exercise, cls, exam, asked=False, module=None):
    """Why the running statistics are not graded ("" when they are): asked for (``asked``:
    True, or the reason), ``NO_RUNNING_STATS = True`` in the file (``module``), or a BatchNorm
    whose layer (driven as ``exam`` drives it) has neither ``running_mean`` nor ``running_var``, as
    built or after a training forward (a training-only answer). Another exercise has no
    running statistics to leave out: CannotGrade."""
    flagged = module is not None and getattr(module, "NO_RUNNING_STATS", False) is True
    if exercise.name not in RUNNING_STATISTICS:
        if asked or flagged:
            raise CannotGrade(_("{name} has no running statistics to leave out (only {names} "
                                "has)").format(name=exercise.name,
                                               names=", ".join(RUNNING_STATISTICS)))
        return ""
    if asked:
        return N_("the running statistics were not asked") if asked is True else asked
    if flagged:
        return N_("NO_RUNNING_STATS = True in the file")
    if _keeps_running_statistics(cls, exercise, exam):
        return ""
    return N_("the layer has no running_mean and no running_var")


def scope(cls, exercise, exam, module=None, forward_only=False, no_running_stats=False):
    """What of the answer is graded: (why the forward alone is, why the running statistics
    are not), each "" when they are graded. ``module``: the file the class was loaded from,
    whose flags (``FORWARD_ONLY``, ``NO_RUNNING_STATS``) and whose class without a backward
    count too; None for a class given directly, graded as asked."""
    if module is None:
        return (forward_only_reason(exercise, forward_only),
                no_running_stats_reason(exercise, cls, exam, no_running_stats))
    return (_reason_in_file(module, cls, exercise, exam, forward_only),
            no_running_stats_reason(exercise, cls, exam, module=module))


def _keeps_running_statistics(cls, exercise, exam):
    """Whether the layer has a running_mean or a running_var, as built or after one training
    forward on the example input (a layer may make them in its first forward); True when it
    cannot be built: the checks then say why."""
    def kept(layer):
        return any(hasattr(layer, f"running_{stat}") for stat in ("mean", "var"))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            driver = exam.maker(cls)(*exercise.example_args)
        except Exception:  # noqa: BLE001 - what __init__ raises is the checks' to report
            return True
        if kept(driver.layer):
            return True
        try:
            driver.forward(np.random.default_rng(0).standard_normal(exercise.example_shape))
        except Exception:  # noqa: BLE001, S110 - what forward raises is the checks' to report
            pass
    return kept(driver.layer)


def _not_written(stat):
    raise NotApplicable(_("the running statistics were not written"))


def _without_running_statistics(make):
    """``make``, whose drivers raise NotApplicable where a probe reads a running statistic
    (the observations after it are not made: neither for nor against a mistake)."""
    def made(*args, **kwargs):
        driver = make(*args, **kwargs)
        driver.running = _not_written
        return driver
    return made


class Watch:
    """What ``run_answer`` tells whoever watches it; in the grader's own process, nobody."""

    def probe(self, label):
        """A probe starts."""

    def method(self, name):
        """The probe enters the answer's ``name`` (__init__, forward, backward)."""

    def ran(self, label, run):
        """A probe ended with ``run``."""

    def todo(self):
        """The probes are done; the skeleton's TODOs are looked for."""


METHODS = {"forward": "forward", "forward_input_kept": "forward",  # the driver's method -> the
           "forward_on_activation": "forward", "backward": "backward"}  # answer's it calls


def run_answer(cls, exercise, path, exam, scoped=("", ""), watch=None):
    """Run every probe of ``exam`` on ``cls`` as ``exercise``, then look for the TODOs of its
    skeleton; an Answer. ``scoped`` (``scope``): why only the forward is graded, or "" when
    the backward is graded too; why the running statistics are not, or "" when they are (the
    probes of the running statistics are then not run, and no probe reads one).
    ``watch`` (a ``Watch``) is told of every step."""
    forward_only, no_running_stats = scoped
    make = exam.maker(cls, bool(forward_only))
    if no_running_stats:
        make = _without_running_statistics(make)
    if watch is not None:
        make = _watched(make, watch, exercise.class_name if exercise.function else "__init__")
    answer = Answer(cls.__name__, forward_only, no_running_stats, track=exam.track)
    for probe in exam.probes:
        if watch is not None:
            watch.probe(probe.label)
        if no_running_stats and probe.label.startswith(RUNNING_PROBE):
            run = ProbeRun({}, NotApplicable(_("the running statistics were not written")))
        else:
            run = run_probe(probe, make)
        # the observations not graded (the backward's of a forward-only answer, the running
        # statistics' of a training-only one) are neither graded nor diagnosed
        run.rows = {k: v for k, v in run.rows.items()
                    if not (forward_only and is_backward(k)
                            or no_running_stats and is_running_statistics(probe.label, k))}
        answer.runs[probe.label] = run
        if watch is not None:
            watch.ran(probe.label, run)
    if watch is not None:
        watch.todo()
    answer.todo = not_implemented(cls, exercise, path, exam, forward_only)
    return answer


def _watched(make, watch, first):
    """``make``, whose drivers tell ``watch`` which method of the answer they enter (the
    answer is made in ``first``: its __init__, or the function an exercise asks for)."""
    def entering(call, name):
        def entered(*args, **kwargs):
            watch.method(name)
            return call(*args, **kwargs)
        return entered

    def made(*args, **kwargs):
        watch.method(first)
        driver = make(*args, **kwargs)
        for attribute, name in METHODS.items():
            if callable(getattr(driver, attribute, None)):
                setattr(driver, attribute, entering(getattr(driver, attribute), name))
        return driver
    return made



def example(exercise, make):
    """The layer of the exercise's example arguments, made by ``make``; SyncBatchNorm's in a
    group of one worker, where it runs alone."""
    if exercise.name == "sync_batchnorm":
        return make(*exercise.example_args[:1], process_group=InProcessGroup(1).workers[0])
    return make(*exercise.example_args)


def not_implemented(cls, exercise, path, exam, forward_only=""):
    """The methods of the answer that still raise NotImplementedError from its own file (the
    skeleton's TODOs), each tried once on the exercise's example input: forward, and backward
    when the track's answers write it by hand and it is graded; a function's name."""
    make = exam.maker(cls)
    if exercise.function:  # a function: called once on the example arguments
        return [exercise.class_name] if _raises_todo(
            lambda: make(*exercise.example_args), path, exercise.class_name) else []
    x = np.random.default_rng(0).standard_normal(exercise.example_shape)

    def forward():
        example(exercise, make).forward(x, *exercise.example_extra)

    def backward():
        layer = example(exercise, make)
        try:
            layer.forward(x, *exercise.example_extra)
        except Exception:  # noqa: BLE001 - only backward's own TODO matters here
            pass
        layer.backward(x)
    methods = {"forward": forward}
    if exam.backward_by_hand and not forward_only:
        methods["backward"] = backward
    return [name for name, call in methods.items() if _raises_todo(call, path, name)]


def _raises_todo(call, path, method):
    """Whether ``call()`` raises NotImplementedError from ``method`` in file ``path``; any
    other problem is the checks' to report."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except NotImplementedError as e:
        frame = user_frame(e, path)
        return frame is not None and frame.name == method
    except Exception:  # noqa: BLE001 - other problems are reported by the checks
        pass
    return False
