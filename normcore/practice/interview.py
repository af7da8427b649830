"""A mock interview: one exercise, a time box, no hints until it is over.

    exercise = pick(difficulty="easy", seed=0)       # or pick("layernorm")
    attempt, report = interview(exercise, minutes=20, folder=".")

``interview`` writes the skeleton, says what to do and waits until the candidate presses
Enter (or stdin closes) or the time box is over, then grades the file with hints off (no
mistake named: an interviewer does not name it either), says whether it was over time, and
appends the attempt to the history (``history.py``), which shows the mistakes afterwards.

The clock is ``CLOCK`` (normcore's one clock, ``normcore.progress.CLOCK``) unless another is
given: tests give a fake one and never wait (stdin closed), so no test depends on how long
anything takes.
"""

import random
import sys
import threading
from datetime import UTC, datetime

from ..i18n import translator
from ..i18n.width import fill
from .. import progress
from ..progress import Stopwatch
from . import history, skeletons, torch_track
from .classroom import row_of
from .exercises import DIFFICULTY, EXERCISES
from .grader import CannotGrade, grade_file
from .loading import cannot_grade
from .report import format_report

_ = translator("practice")
LEVELS = {name: level for level, name in DIFFICULTY.items()}  # "easy" -> 1
CLOCK = progress.CLOCK  # the interview's clock (a fake in tests)
WIDTH = 80
MAX_MINUTES = 600  # a time box longer than ten hours is a typing mistake


class InterviewError(ValueError):
    """Bad input to an interview (no such exercise, a time box that is not positive); says why."""


def pick(name=None, difficulty=None, seed=None, forward_only=False, torch=False):
    """The exercise called ``name``, or one drawn at random (with ``seed``) among those of
    ``difficulty`` ("easy", "medium", "hard"; default any); with ``forward_only``, among
    those that have a backward to leave out; with ``torch``, among those the PyTorch track
    has."""
    if difficulty is not None and difficulty not in LEVELS:
        raise InterviewError(_("unknown difficulty {difficulty!r}: expected one of {levels}").format(
            difficulty=difficulty, levels=", ".join(LEVELS)))
    if name is not None:
        if name not in EXERCISES:
            raise InterviewError(_("unknown exercise {name!r}: expected one of {names}").format(
                name=name, names=", ".join(EXERCISES)))
        exercise = EXERCISES[name]
        if difficulty is not None and exercise.difficulty != LEVELS[difficulty]:
            raise InterviewError(_("{name} is {level}, not {difficulty}: give the exercise or "
                                   "the difficulty, not both").format(
                                       name=name, level=_(DIFFICULTY[exercise.difficulty]),
                                       difficulty=difficulty))
        return exercise
    pool = sorted((e for e in EXERCISES.values()
                   if (difficulty is None or e.difficulty == LEVELS[difficulty])
                   and not (forward_only and e.function)
                   and not (torch and e.name not in torch_track.EXERCISES)), key=lambda e: e.name)
    return random.Random(seed).choice(pool)


def check_minutes(minutes):
    """``minutes`` as a positive float of at most MAX_MINUTES; InterviewError otherwise."""
    try:
        value = float(minutes)
    except (TypeError, ValueError):
        raise InterviewError(_("expected a number of minutes, got {minutes!r}").format(
            minutes=minutes)) from None
    if not 0 < value <= MAX_MINUTES:
        raise InterviewError(_("expected a time box of more than 0 and at most {most} minutes, "
                               "got {minutes}").format(most=MAX_MINUTES, minutes=minutes))
    return value


def wait_for_enter(stream, seconds):
    """Wait until a line (Enter) or the end of ``stream`` comes, or ``seconds`` pass. True when
    the candidate ended it (Enter, or stdin closed or unusable), False when the time ran out."""
    done = threading.Event()

    def read():
        try:
            stream.readline()
        except (OSError, ValueError):  # no usable stdin (closed, or captured): as if at its end
            pass
        done.set()

    threading.Thread(target=read, daemon=True).start()
    return done.wait(seconds)


def interview(exercise, minutes=None, folder=".", force=False, forward_only=False, wait=True,
              stdin=None, out=print, clock=None, now=None, history_path=None, torch=False,
              limits=None):
    """Run one mock interview (see the module's docstring); returns (Attempt, Report or None).
    ``torch``: the answer is a torch.nn.Module with a forward only (the PyTorch track);
    ``limits``: the time and memory the file gets in its child process (``sandbox.Limits``).

    Raises InterviewError for bad input, FileExistsError when the skeleton would overwrite a
    file (without ``force``) and skeletons.NoForwardOnly for a forward-only function exercise.
    """
    box = check_minutes(exercise.minutes if minutes is None else minutes)
    target = skeletons.write(exercise.name, folder, force, forward_only, torch)
    date = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    watch = Stopwatch(clock or CLOCK)
    todo = skeletons.what_to_fill(exercise.name, forward_only, torch)
    out(_fill(_("Mock interview: {name} ({level}), time box {box} min.").format(
        name=exercise.name, level=_(DIFFICULTY[exercise.difficulty]), box=f"{box:g}")))
    tools = _("PyTorch, autograd for the backward") if torch else _("NumPy only")
    out(_fill(_("Wrote {target}: fill in {todo}. {tools}, no notes, no hints.").format(
        target=target, todo=_(todo), tools=tools)))
    if wait:
        out(_fill(_("Press Enter when you are done; when the time is up it is graded as it is.")))
        ended = "enter" if wait_for_enter(stdin or sys.stdin, box * 60) else "time up"
    else:
        ended = "no wait"
    taken = max(0.0, watch.elapsed() / 60)
    over = ended == "time up" or taken > box
    if ended == "time up":
        out(_fill(_("Time is up ({box} min): graded as it is.").format(box=f"{box:g}")))
    elif over:
        out(_fill(_("Done in {taken} min: over the time box of {box} min by {over} min.").format(
            taken=f"{taken:.1f}", box=f"{box:g}", over=f"{taken - box:.1f}")))
    else:
        out(_fill(_("Done in {taken} min, within the time box of {box} min.").format(
            taken=f"{taken:.1f}", box=f"{box:g}")))
    attempt = history.Attempt(date, exercise.name, str(target), box, round(taken, 1), over, ended,
                              forward_only, torch)
    report = None
    try:  # what the file prints stays in its child process: it is not the grade
        report = grade_file(target, layer=exercise.name, forward_only=forward_only, limits=limits)
    except CannotGrade as e:
        attempt.error = str(e)
        out(cannot_grade(e))
    else:
        row = row_of(report)
        attempt.passed, attempt.checks_passed, attempt.checks_total = (
            row.passed, row.checks_passed, row.checks_total)
        attempt.mistakes, attempt.not_implemented = row.mistakes, row.not_implemented
        out(format_report(report, hints="none"))
    path = history.append(attempt, history_path)
    out("\n" + _fill(_("Recorded in {path}.").format(path=path)))
    if not attempt.passed and not attempt.error:
        out(_fill(_("The mistakes behind the failures: normcore practice history, or"))
            + f"\n    normcore practice check {target} --hints full")
    return attempt, report


def _fill(text):
    return fill(text, WIDTH)
