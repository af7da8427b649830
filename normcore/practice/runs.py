"""An answer's run: what of it is graded, the probes on it, its skeleton's TODOs.

The run is the same in the child process ``sandbox`` forks for a file and, for a class given
directly (trusted code: a test's, a notebook's), in the grader's own process
(``grader.grade``). It knows the answer's track only through the track's ``Exam`` of the
exercise (``tracks.exam``): the probes to run, how to drive the answer, whether its backward
is written by hand. Every track's answer is scoped, run and searched for TODOs by the same
code, so that neither the grader, the diagnosis nor the report asks which track it is on.
"""

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
    built = []

    def build_and_train(make):
        built.append(make(*exercise.example_args))
        if not kept(built[0].layer):
            built[0].forward(example_input(exercise))
    run_probe(_Call("running statistics", build_and_train), exam.maker(cls))
    return not built or kept(built[0].layer)


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


def nobody(*message):
    """Who watches ``run_answer`` in the grader's own process: nobody."""


METHODS = {"forward": "forward", "forward_input_kept": "forward",  # the driver's method -> the
           "forward_on_activation": "forward", "backward": "backward"}  # answer's it calls


def run_answer(cls, exercise, path, exam, module=None, forward_only=False,
               no_running_stats=False, tell=nobody):
    """Run every probe of ``exam`` on ``cls`` as ``exercise``, then look for the TODOs of its
    skeleton; an Answer. What is graded is settled first (``scope``, with ``module``,
    ``forward_only`` and ``no_running_stats`` as it takes them): the backward's observations
    of a forward-only answer are not graded, and the probes of the running statistics are
    not run when those are not graded.

    ``tell(*message)`` is told every step, in this order: ``("loaded", class name, exercise
    name, track, why forward only, why no running statistics)``; per probe ``("probe",
    label)``, ``("method", name)`` on entering the answer's __init__, forward or backward,
    and ``("ran", label, ProbeRun)``; then ``("todo-stage",)`` before the TODOs are looked
    for. The sandbox's child sends each to the grader (``sandbox._Messenger``)."""
    forward_only, no_running_stats = scope(cls, exercise, exam, module, forward_only,
                                           no_running_stats)
    tell("loaded", cls.__name__, exercise.name, exam.track, forward_only, no_running_stats)
    make = exam.maker(cls, bool(forward_only))
    if no_running_stats:
        make = _without_running_statistics(make)
    make = _watched(make, tell, exercise.class_name if exercise.function else "__init__")
    answer = Answer(cls.__name__, forward_only, no_running_stats, track=exam.track)
    for probe in exam.probes:
        tell("probe", probe.label)
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
        tell("ran", probe.label, run)
    tell("todo-stage")
    answer.todo = not_implemented(cls, exercise, path, exam, forward_only)
    return answer


def _watched(make, tell, first):
    """``make``, whose drivers ``tell`` which method of the answer they enter (the answer is
    made in ``first``: its __init__, or the function an exercise asks for)."""
    def entering(call, name):
        def entered(*args, **kwargs):
            tell("method", name)
            return call(*args, **kwargs)
        return entered

    def made(*args, **kwargs):
        tell("method", first)
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


@dataclass(frozen=True)
class _Call:
    """A run of the answer that is not one of the exercise's probes (``not_implemented``,
    ``_keeps_running_statistics``): ``run_probe`` runs it as it runs them (NumPy's warnings
    silenced, any error kept): ``call(make)``, with the track's ``make``."""

    label: str
    call: object

    def run(self, rec, make, rng):
        self.call(make)


def example_input(exercise):
    """The exercise's example input: a standard normal array of its example shape (seed 0)."""
    return np.random.default_rng(0).standard_normal(exercise.example_shape)


def not_implemented(cls, exercise, path, exam, forward_only=""):
    """The methods of the answer that still raise NotImplementedError from its own file (the
    skeleton's TODOs), each tried once on the exercise's example input: forward, and backward
    when the track's answers write it by hand and it is graded; a function's name. Any other
    problem is the checks' to report."""
    if exercise.function:  # a function: called once on the example arguments
        methods = {exercise.class_name: lambda make: make(*exercise.example_args)}
    else:
        methods = {"forward": lambda make: example(exercise, make).forward(
            example_input(exercise), *exercise.example_extra)}
        if exam.backward_by_hand and not forward_only:
            methods["backward"] = lambda make: _backward(exercise, make)
    make = exam.maker(cls)
    return [name for name, call in methods.items()
            if _raised_todo(run_probe(_Call(name, call), make).error, path, name)]


def _backward(exercise, make):
    """The example layer's backward, after its forward (whatever the forward raised)."""
    layer = example(exercise, make)
    x = example_input(exercise)
    try:
        layer.forward(x, *exercise.example_extra)
    except Exception:  # noqa: BLE001 - only backward's own TODO matters here
        pass
    layer.backward(x)


def _raised_todo(error, path, method):
    """Whether ``error`` is a NotImplementedError raised from ``method`` in file ``path``."""
    if not isinstance(error, NotImplementedError):
        return False
    frame = user_frame(error, path)
    return frame is not None and frame.name == method
