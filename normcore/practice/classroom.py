"""Grading a class: many files (or a folder of them) graded one by one, one row per file.

    rows = grade_many(["alice.py", "bob.py"])      # or grade_many(files_in(["submissions/"]))
                                                   # name="LayerNorm": that class in each file
    print(format_table(rows))                      # file, exercise, checks passed, mistakes named
    to_json(rows), to_csv(rows)                    # the same rows for a course's records
    exit_status(rows)                              # 0 all pass, 1 a file fails, 2 one cannot be graded

Each file goes through ``grader.grade_file`` exactly as ``normcore practice check FILE`` would,
in a child process of its own (``sandbox``): a file that cannot be graded (missing, does not
import, no layer class) becomes a row with its reason, and one that hangs, exits, crashes, runs
out of memory or floods its output a row that says so (``stopped``), instead of stopping the
others.
"""

import csv
import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..i18n import joined, translator
from ..i18n.width import display_width, pad, wrap
from .grader import PASSING, CannotGrade, grade_file
from .report import hint_level

_ = translator("practice")
WIDTH = 80
FIELDS = ("file", "exercise", "class", "passed", "checks_passed", "checks_total", "mistakes",
          "variants", "constants", "no_running_stats", "stopped", "error")


@dataclass
class Row:
    """One file's result: what a teacher records. ``error`` is set only when it cannot be graded."""

    file: str
    exercise: str = None
    class_name: str = None
    passed: bool = False
    checks_passed: int = 0
    checks_total: int = 0
    mistakes: list = field(default_factory=list)  # catalog ids named by the diagnosis
    not_implemented: list = field(default_factory=list)  # methods still raising NotImplementedError
    stopped: str = None  # what stopped the file's process early ("timed out after 5 s in ...")
    error: str = None
    variants: list = field(default_factory=list)  # published variants named (not mistakes)
    constants: dict = field(default_factory=dict)  # {id: {name: value}}: a named mistake's constant
    no_running_stats: bool = False  # a training-only BatchNorm: its running statistics not graded

    def record(self):
        """The row as a JSON/CSV record, with the keys of FIELDS."""
        d = asdict(self)
        d["class"] = d.pop("class_name")
        if d["error"] is not None:  # one line: a spreadsheet cell, a JSON string
            d["error"] = " ".join(line.strip() for line in d["error"].splitlines())
        return {k: d[k] for k in FIELDS}


def files_in(args):
    """The files named: a folder stands for every *.py directly in it, sorted by name."""
    files = []
    for arg in args:
        path = Path(arg)
        files += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return [str(f) for f in files]


def grade_one(path, name=None, layer=None, forward_only=False, limits=None):
    """Grade one file into a Row (``limits``: the child process's, ``sandbox.Limits``); never
    raises for the file's own faults (what it prints is captured in its child process)."""
    try:
        report = grade_file(path, name=name, layer=layer, forward_only=forward_only, limits=limits)
    except CannotGrade as e:
        return Row(str(path), error=str(e))
    except Exception as e:  # noqa: BLE001 - one student's file must not stop the class
        return Row(str(path), error=_("the grader stopped: {error}: {message}").format(
            error=type(e).__name__, message=e))
    return row_of(report, path)


def row_of(report, path=None):
    """A grader Report as a Row (n/a, not-asked and not-written checks count as passed, as they
    do for Report.passed)."""
    ok = sum(c.status in PASSING for c in report.checks)
    return Row(str(path if path is not None else report.file), report.exercise.name,
               report.class_name, report.passed, ok, len(report.checks),
               list(report.mistake_ids), list(report.not_implemented),
               variants=list(report.variants),
               constants={i: {constant.name: value} for i, (constant, value)
                          in report.constants.items()},
               stopped=report.stopped or None, no_running_stats=bool(report.no_running_stats))


def grade_many(paths, name=None, forward_only=False, limits=None):
    """One Row per file; ``name``: the class to grade in every file (``--name``); ``limits``:
    each file's child process's (``sandbox.Limits``)."""
    return [grade_one(p, name=name, forward_only=forward_only, limits=limits) for p in paths]


def exit_status(rows):
    """2 when a file cannot be graded, else 1 when one fails, else 0."""
    if any(r.error is not None for r in rows):
        return 2
    return 0 if all(r.passed for r in rows) else 1


# --- formatting ---------------------------------------------------------------------------------
def shorten(path, width):
    """``path`` in at most ``width`` characters: the file name kept, leading folders elided."""
    if len(path) <= width:
        return path
    name = Path(path).name
    if len(name) + 4 > width:  # the name alone is too long: keep its start and its end
        keep = width - 3
        return name[:keep - keep // 2] + "..." + name[len(name) - keep // 2:]
    tail = path[len(path) - (width - 4):]
    return ".../" + (tail.split("/", 1)[1] if "/" in tail else tail)


def _reason(row):
    """The first line of why a file cannot be graded, without repeating its path."""
    text = row.error.splitlines()[0]
    if text.startswith(row.file):
        text = text[len(row.file):].lstrip(": ")
    return _("cannot grade: {reason}").format(reason=text.replace(row.file, Path(row.file).name))


def _result(row, names=True):
    if row.error is not None:
        return _reason(row)
    named = [_with_constant(row, m) for m in row.mistakes] + [
        _("{id} (published variant)").format(id=i) for i in row.variants]
    text = (", ".join(named) or "-") if names else (_("pass") if row.passed else _("fail"))
    if row.stopped:  # what happened, in place of a bare "-"
        text = row.stopped if text == "-" else f"{text}; {row.stopped}"
    if row.not_implemented:
        text = joined(text, _("(todo: {methods})").format(methods=", ".join(row.not_implemented)))
    if row.no_running_stats:
        text = joined(text, _("(training only: no running statistics)"))
    return text


def _with_constant(row, mistake_id):
    """``ce-log-eps (eps=1e-05)`` for a mistake named with the constant it was found with."""
    found = row.constants.get(mistake_id, {})
    return mistake_id + "".join(f" ({name}={value!r})" for name, value in found.items())


def _common_folder(files):
    """The folder every file is in ('' when they are not all in one, or in the current one)."""
    parents = {str(Path(f).parent) for f in files}
    if len(files) < 2 or len(parents) != 1 or parents == {"."}:
        return ""
    return parents.pop()


def format_table(rows, width=WIDTH, hints="full"):
    """One line per file (continued, indented, when the mistakes do not fit), then a total.

    Files all in one folder are shown by name under an "in FOLDER/" line; a path longer than
    the file column keeps its file name and loses its leading folders. With ``hints="none"``
    (``report.HINT_LEVELS``) the last column says pass or fail and names no mistake.
    """
    names_shown = hint_level(hints).names
    folder = _common_folder([r.file for r in rows])
    names = [Path(r.file).name if folder else r.file for r in rows]
    last = _("mistakes named") if names_shown else _("result")
    ex_w = max(display_width(_("exercise")), max(len(r.exercise or "") for r in rows))
    counts = [f"{r.checks_passed}/{r.checks_total}" if r.error is None else "" for r in rows]
    checks_w = max([display_width(_("checks"))] + [len(c) for c in counts])
    # the file column gives way so that the longest mistake id fits whole in the last column
    longest = max([display_width(last)] + [len(m) for r in rows for m in r.mistakes + r.variants])
    file_w = max(4, min(28, max(map(len, names)), width - (ex_w + checks_w + 6) - longest))
    heads = (pad(_("file"), file_w), pad(_("exercise"), ex_w), pad(_("checks"), checks_w, ">"))
    head = "  ".join(heads + (last,))
    rule = "-" * min(width, max(display_width(head), 60))
    out = [head, rule]
    if folder:
        out.insert(0, _("in {folder}:").format(folder=shorten(folder + "/", width - 4)))
    for r, name, checks in zip(rows, names, counts):
        start = f"{shorten(name, file_w):<{file_w}}  {r.exercise or '':<{ex_w}}  {checks:>{checks_w}}  "
        if r.error is not None:  # the reason gets the line from the exercise column on
            start = f"{shorten(name, file_w):<{file_w}}  "
        lines = wrap(_result(r, names_shown), width - len(start))
        out.append((start + lines[0]).rstrip())
        out += [" " * len(start) + line for line in lines[1:]]
    out.append(rule)
    out.append(summary(rows))
    return "\n".join(out)


def summary(rows):
    passed = sum(r.passed for r in rows)
    broken = sum(r.error is not None for r in rows)
    failed = len(rows) - passed - broken
    text = _.ngettext("{n} file: {passed} pass, {failed} fail", "{n} files: {passed} pass, "
                      "{failed} fail", len(rows)).format(n=len(rows), passed=passed, failed=failed)
    return text + (_(", {n} cannot be graded").format(n=broken) if broken else "")


def to_json(rows):
    return json.dumps([r.record() for r in rows], indent=2) + "\n"


def to_csv(rows):
    """The records as CSV; ``mistakes`` and ``variants`` joined with spaces, ``constants`` as
    ``ce-log-eps(eps=1e-05)`` joined with spaces, ``error`` empty when graded."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    for record in (r.record() for r in rows):
        record["mistakes"] = " ".join(record["mistakes"])
        record["variants"] = " ".join(record["variants"])
        record["constants"] = " ".join(f"{m}({name}={value!r})" for m, found in
                                       record["constants"].items() for name, value in found.items())
        record["stopped"] = record["stopped"] or ""
        record["error"] = record["error"] or ""
        record["exercise"] = record["exercise"] or ""
        record["class"] = record["class"] or ""
        writer.writerow(record)
    return buffer.getvalue()
