"""The record of mock interviews and interview questions: one JSON line per record, and the
progress they show.

    append(attempt)                  add an attempt (or an Asked question) to the history file
    attempts, problems = load()      every attempt recorded, and the lines that are not a record
    asked = load_asked()             every interview question asked (normcore practice questions)
    print(format_history(attempts))  the attempts, then progress per exercise (80 columns)
    print(format_asked(asked))       the questions asked, and how many were known

The file is ``practice_history.jsonl`` in ``$NORMCORE_HOME``, or in ``~/.normcore/`` when
that is not set. An attempt keeps the mistakes the grader named, although the interview
itself showed no hints: they are shown here, afterwards.
"""

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..i18n import joined, translator
from ..i18n.width import display_width, pad, wrap
from .questions import TOPIC_TITLES

_ = translator("practice")
WIDTH = 80
FILE_NAME = "practice_history.jsonl"


@dataclass
class Attempt:
    """One mock interview: when, which exercise, how long it took and how it was graded."""

    date: str  # when it started, ISO 8601 in UTC, to the second
    exercise: str
    file: str
    time_box: float  # minutes
    minutes_taken: float
    over_time: bool  # not finished within the time box
    ended: str  # "enter" (the candidate said so), "time up", or "no wait" (--no-wait)
    forward_only: bool = False
    torch: bool = False  # the PyTorch track: an nn.Module, its backward by autograd
    passed: bool = False
    checks_passed: int = 0
    checks_total: int = 0
    mistakes: list = field(default_factory=list)  # catalog ids named by the grade
    not_implemented: list = field(default_factory=list)
    error: str = None  # why the file could not be graded

    def record(self):
        return asdict(self)


@dataclass
class Asked:
    """One interview question asked by normcore practice questions, and whether the candidate
    said they knew the answer (None: they did not say)."""

    date: str  # ISO 8601 in UTC, to the second
    question: str  # the question's id
    topic: str
    known: bool = None
    lang: str = "en"
    kind: str = "question"  # tells these lines from an attempt's (which have no kind)

    def record(self):
        return asdict(self)


REQUIRED = ("date", "exercise", "file", "time_box", "minutes_taken", "over_time", "ended")


def home():
    """normcore's folder for the user's own records: $NORMCORE_HOME, else ~/.normcore."""
    return Path(os.environ.get("NORMCORE_HOME") or Path.home() / ".normcore")


def history_file():
    return home() / FILE_NAME


def append(attempt, path=None):
    """Add one attempt to the history (its folder created when missing); returns the path."""
    path = Path(path or history_file())
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(attempt.record()) + "\n")
    return path


def load(path=None):
    """(attempts, problems): every attempt in the history file, oldest first, and a message
    for each line that is neither an attempt nor an asked question (skipped). No file: no
    attempts."""
    attempts, _asked, problems = _read(path)
    return attempts, problems


def load_asked(path=None):
    """Every interview question asked, oldest first (the lines that are no record are skipped:
    load names them)."""
    return _read(path)[1]


ASKED_REQUIRED = ("date", "question", "topic")


def _read(path):
    """(attempts, asked questions, problems) of the history file; files written before the
    questions existed hold attempts alone, and load as they always did."""
    path = Path(path or history_file())
    if not path.exists():
        return [], [], []
    attempts, asked, problems = [], [], []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if isinstance(record, dict) and record.get("kind") == "question":
                asked.append(_record(Asked, record, ASKED_REQUIRED))
            else:
                attempts.append(_record(Attempt, record, REQUIRED))
        except (ValueError, TypeError, AttributeError) as e:
            problems.append(_("line {number} of {path} is not an attempt ({error}): skipped").format(
                number=number, path=path, error=e))
    return attempts, asked, problems


def _record(kind, record, required):
    """A ``kind`` made of the JSON object ``record`` (its unknown keys ignored); ValueError
    naming the required keys it lacks."""
    missing = [k for k in required if k not in record]
    if missing:
        raise ValueError(_("no {keys}").format(keys=", ".join(missing)))
    known = {f.name for f in fields(kind)}
    return kind(**{k: v for k, v in record.items() if k in known})


def progress(attempts):
    """Per exercise, in the order first practised: the number of attempts, and the first, the
    latest and the best (most checks passed, then fewest minutes) of them."""
    by_exercise = {}
    for a in attempts:
        by_exercise.setdefault(a.exercise, []).append(a)
    return [{"exercise": name, "attempts": len(tries), "first": tries[0], "latest": tries[-1],
             "best": max(tries, key=lambda a: (a.checks_passed, -a.minutes_taken))}
            for name, tries in by_exercise.items()]


def to_json(attempts, path=None, asked=()):
    rows = [{"exercise": p["exercise"], "attempts": p["attempts"],
             **{k: _score(p[k]) for k in ("first", "latest", "best")}} for p in progress(attempts)]
    return json.dumps({"file": str(path or history_file()),
                       "attempts": [a.record() for a in attempts], "progress": rows,
                       "questions": [q.record() for q in asked]}, indent=2) + "\n"


def _score(attempt):
    return {"date": attempt.date, "checks_passed": attempt.checks_passed,
            "checks_total": attempt.checks_total, "minutes_taken": attempt.minutes_taken}


def _checks(attempt):
    return "-" if attempt.error else f"{attempt.checks_passed}/{attempt.checks_total}"


def _time(attempt):
    minutes = f"{attempt.minutes_taken:.0f}/{attempt.time_box:g}"
    if attempt.over_time:
        return _("{minutes} min over").format(minutes=minutes)
    return _("{minutes} min").format(minutes=minutes)


def _mistakes(attempt):
    if attempt.error:
        return _("cannot grade: {reason}").format(reason=attempt.error.splitlines()[0])
    text = ", ".join(attempt.mistakes) or "-"
    if attempt.not_implemented:
        text = joined(text, _("(todo: {methods})").format(methods=", ".join(attempt.not_implemented)))
    return text + (" " + _("[forward only]") if attempt.forward_only else "") + (
        " [PyTorch]" if attempt.torch else "")


def _columns(cells, widths):
    """Cells padded to their widths (display columns; a width < 0 aligns right), two spaces
    apart."""
    return "  ".join(pad(c, abs(w), ">" if w < 0 else "<") for c, w in zip(cells, widths))


def format_history(attempts, path=None):
    """The attempts, oldest first (date, exercise, minutes taken of the time box, checks
    passed, mistakes named), then the progress per exercise; at most 80 display columns."""
    if not attempts:
        return _("No mock interviews recorded yet: normcore practice interview")
    heads = [_("date"), _("exercise"), _("minutes"), _("checks")]
    ex_w = max(display_width(heads[1]), *(len(a.exercise) for a in attempts))
    time_w = max(display_width(heads[2]), *(display_width(_time(a)) for a in attempts))
    check_w = max(display_width(heads[3]), *(len(_checks(a)) for a in attempts))
    widths = (16, ex_w, time_w, -check_w)
    out = wrap(_("Mock interviews ({path}):").format(path=path or history_file()), WIDTH)
    out += [_columns(heads, widths) + "  " + _("mistakes named"), "-" * WIDTH]
    for a in attempts:
        first = _columns((a.date[:16].replace("T", " "), a.exercise, _time(a), _checks(a)),
                         widths) + "  "
        room = max(20, WIDTH - display_width(first))
        lines = wrap(_mistakes(a), room)
        out.append(first + lines[0])
        out += [" " * (WIDTH - room) + line for line in lines[1:]]
    kinds = ("first", "latest", "best")
    scores = [(p, [_("{checks} in {minutes} min").format(checks=_checks(p[k]),
                                                         minutes=f"{p[k].minutes_taken:.0f}")
                   for k in kinds]) for p in progress(attempts)]
    score_w = max([15] + [display_width(t) for _, texts in scores for t in texts[:2]])
    widths = (ex_w, -max(5, display_width(_("tries"))), score_w, score_w)
    out += ["", _("Progress per exercise (checks passed, in how many minutes):"),
            _columns((_("exercise"), _("tries"), _("first"), _("latest")), widths) + "  "
            + _("best"), "-" * WIDTH]
    for p, (first, latest, best) in scores:
        out.append(_columns((p["exercise"], str(p["attempts"]), first, latest), widths) + "  " + best)
    return "\n".join(out)


def _topic(asked):
    """The topic of an asked question as the questions' headings name it."""
    return _(TOPIC_TITLES.get(asked.topic, asked.topic))


def _known(asked):
    return {True: _("yes"), False: _("no"), None: "-"}[asked.known]


def format_asked(asked):
    """The interview questions asked, oldest first (date, question, topic, known), then how
    many were known; at most 80 display columns. "" when none was asked."""
    if not asked:
        return ""
    heads = [_("date"), _("question"), _("topic"), _("known")]
    q_w = max(display_width(heads[1]), *(len(a.question) for a in asked))
    t_w = max(display_width(heads[2]), *(display_width(_topic(a)) for a in asked))
    widths = (16, q_w, t_w)
    out = [_("Interview questions asked (normcore practice questions):"),
           _columns(heads[:3], widths) + "  " + heads[3], "-" * WIDTH]
    for a in asked:
        out.append(_columns((a.date[:16].replace("T", " "), a.question, _topic(a)), widths)
                   + "  " + _known(a))
    answered = [a for a in asked if a.known is not None]
    out += wrap(_("Known: {known} of {answered} answered; {distinct} different questions "
                  "asked.").format(known=sum(a.known for a in answered), answered=len(answered),
                                   distinct=len({a.question for a in asked})), WIDTH)
    return "\n".join(out)
