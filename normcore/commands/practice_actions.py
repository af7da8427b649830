"""What each ``normcore practice`` subcommand does (its parser, help texts and examples are
``practice.py``'s): list the exercises, write a skeleton, grade files, show a reference answer,
run a timed interview, show the history, ask the interview questions.
"""

import importlib.util
import os
import sys
from pathlib import Path

from .._install import torch_hint
from ..i18n import translator
from ..i18n.width import clip, display_width, fill, pad
from ..practice import CATALOG, EXERCISES, CannotGrade, classroom, grade_file, mistakes_for
from ..practice import answers, history, interview, skeletons, torch_track
from ..practice.loading import NEEDS_TORCH, cannot_grade
from ..practice.exercises import DIFFICULTY, path
from ..practice.grader import format_report
from ..practice.sandbox import GiB, Limits
from ..practice import questions
from ..practice.questions import quiz

_ = translator("practice")
catalog_text = translator("catalog")  # the mistakes' titles and symptoms (practice/catalog)
WIDTH = 80  # every line list and the catalog print fits in 80 display columns


def _error(message):
    print(fill(_("error: {message}").format(message=message), WIDTH, subsequent_indent="  "),
          file=sys.stderr)


def _fill(text, indent):
    return fill(text, WIDTH, indent=indent)


def _list(args):
    width = max(map(len, EXERCISES))
    levels = {k: f"{k} {_(v)}" for k, v in DIFFICULTY.items()}
    level_w = max(8, *map(display_width, levels.values()))
    print(_("The path, easy to hard (normcore practice new NAME):"))
    for step, ex in enumerate(path(), 1):
        count = sum(not m.variant_in(ex.name) for m in mistakes_for(ex.name))
        print(f"  {step:>2}. {ex.name:<{width}}  {pad(levels[ex.difficulty], level_w)}  "
              + _("{minutes} min").format(minutes=f"{ex.minutes:>2}") + "  "
              + _.ngettext("{n} catalogued mistake", "{n} catalogued mistakes", count).format(
                  n=f"{count:>2}"))
        print(_fill(_(ex.summary), " " * 8))
        if ex.name in torch_track.NUMPY_ONLY:
            print(_fill(_(torch_track.NUMPY_ONLY[ex.name]), " " * 8))
    torch_only = torch_track.mistakes.TORCH_ONLY
    if args.mistakes:
        mistakes_only = [m for m in CATALOG if any(not m.variant_in(e) for e in m.exercises)]
        for title, mistakes in ((_("Catalogued mistakes ({n})").format(n=len(mistakes_only)),
                                 mistakes_only),
                                (_("PyTorch track only ({n}; with --torch, the forward mistakes "
                                   "above too)").format(n=len(torch_only)), torch_only)):
            print("\n" + _fill(title + ":", ""))
            for m in mistakes:
                where = [e for e in m.exercises if not m.variant_in(e)]
                if not where:
                    continue
                print(fill(f"{m.id}: {catalog_text(m.title)}  [{', '.join(where)}]", WIDTH,
                           indent="  ", subsequent_indent=" " * 6))
                print(_fill(_("symptom: {text}").format(text=catalog_text(m.symptom)), " " * 6))
        _list_variants()
    else:
        print("\n" + _fill(_("{n} catalogued mistakes, {more} more for PyTorch: normcore practice "
                             "list --mistakes").format(n=len(CATALOG), more=len(torch_only)), ""))
    return 0


def _list_variants():
    """The published variants: catalog entries that are, in some exercise, a design published
    code uses on purpose; listed apart, with their sources (never counted as mistakes)."""
    variants = [(m, e, m.variant_in(e)) for m in CATALOG for e in m.exercises if m.variant_in(e)]
    print("\n" + _fill(_("Published variants ({n}; not what the exercise asks, never counted as "
                         "a mistake):").format(n=len(variants)), ""))
    for m, exercise, variant in variants:
        print(fill(f"{m.id}: {catalog_text(variant.name)}  [{exercise}]", WIDTH, indent="  ",
                   subsequent_indent=" " * 6))
        print(_fill(_("source: {text}").format(text=catalog_text(variant.source)), " " * 6))
        print(_fill(_("the exercise asks: {text}").format(text=catalog_text(variant.asks)), " " * 6))


def _torch_key(name):
    """'torch/NAME' for the PyTorch track, None (and a message) when it has no such exercise."""
    if name in torch_track.EXERCISES:
        return f"torch/{name}"
    said = _(torch_track.NO_SUCH_EXERCISE).format(name=name, names=", ".join(torch_track.EXERCISES))
    if name in torch_track.NUMPY_ONLY:
        said = f"{name}: {_(torch_track.NUMPY_ONLY[name])}"
    print(_fill(said, ""), file=sys.stderr)
    return None


def _new(args):
    if args.torch and _torch_key(args.name) is None:
        return 2
    if not _can_write_in(args.dir):
        return 2
    try:
        target = skeletons.write(args.name, args.dir, args.force, args.forward_only, args.torch,
                                 args.no_running_stats)
    except FileExistsError as e:
        print(_fill(str(e), ""))
        return 1
    except (skeletons.NoForwardOnly, skeletons.NoTrainingOnly) as e:
        _error(e)
        return 2
    except OSError:  # a folder the check above could not see through (root in /proc)
        _error(_("cannot write in {folder}").format(folder=args.dir))
        return 2
    ex = EXERCISES[args.name]
    todo = skeletons.what_to_fill(args.name, args.forward_only, args.torch)
    if args.torch and importlib.util.find_spec("torch") is None:
        print(_fill(_("note: the file {needs}").format(needs=_(NEEDS_TORCH)), "") + "\n" + torch_hint())
    print(_fill(_("wrote {target}: fill in {todo}, then run").format(target=target, todo=_(todo)),
                "") + f"\n    normcore practice check {target}\n"
          + _fill(_("{level}, time box {minutes} min; the docstring has a worked example").format(
              level=_(DIFFICULTY[ex.difficulty]), minutes=ex.minutes), ""))
    return 0


def _check(args):
    files = classroom.files_in(args.files)
    single = len(args.files) == 1 and not Path(args.files[0]).is_dir()
    if not single and args.layer:
        _error(_("--layer applies to a single FILE, not to several files or a folder"))
        return 2
    if args.json == args.csv == "-":
        _error(_("only one of --json and --csv can write to stdout (-)"))
        return 2
    if not (all(map(_can_read, args.files))
            and all(_can_write(path) for path in (args.json, args.csv) if path not in (None, "-"))):
        return 2
    if not files:
        print(_fill(_("cannot grade: no *.py files in {folders}").format(
            folders=", ".join(args.files)), ""))
        return 2
    limits = Limits(timeout=args.timeout, memory=int(args.memory * GiB))
    to_stdout = "-" in (args.json, args.csv)  # then the table or report is not printed
    if single:  # what the file prints stays in its child process: stdout holds the grade alone
        try:
            report = grade_file(files[0], name=args.name, layer=args.layer,
                                forward_only=args.forward_only, limits=limits)
        except CannotGrade as e:
            rows = [classroom.Row(files[0], error=str(e))]
            if not to_stdout:
                print(cannot_grade(e))
        else:
            rows = [classroom.row_of(report)]
            if not to_stdout:
                print(format_report(report, args.hints) + _printed(report.output))
    else:
        rows = classroom.grade_many(files, name=args.name, forward_only=args.forward_only,
                                    limits=limits)
        if not to_stdout:
            print(classroom.format_table(rows, hints=args.hints))
    for option, write in ((args.json, classroom.to_json), (args.csv, classroom.to_csv)):
        if option == "-":
            sys.stdout.write(write(rows))
        elif option:
            Path(option).write_text(write(rows))
    return classroom.exit_status(rows)


def _printed(output, shown=5):
    """The first lines the file printed while it was graded (in its own process), for the
    report's end; "" when it printed nothing."""
    lines = [line for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    more = _("... and more") if len(lines) > shown else ""
    return "\n\n" + "\n".join([_fill(_("What the file printed while it was graded:"), "")]
                               + ["    " + clip(line, WIDTH - 4) for line in lines[:shown]]
                               + (["    " + more] if more else []))


# --- paths, checked before any work: a clear error and exit status 2, never a traceback ------------
def _can_read(path):
    """Whether ``path`` is a folder or a file that can be read; else says why (False)."""
    target = Path(path)
    if target.is_dir():
        return True
    if not target.exists():
        _error(_("{path}: no such file or folder").format(path=path))
        return False
    try:
        with open(target, "rb"):
            return True
    except OSError:
        _error(_("{path} cannot be read").format(path=path))
        return False


def _can_write(path):
    """Whether a file can be written at ``path`` (tried: opened for appending, and removed
    again when the try made it, so that nothing is left behind); else says why (False)."""
    target = Path(path)
    if target.is_dir():
        _error(_("{path} is a folder, not a file").format(path=path))
        return False
    if not target.parent.is_dir():
        _error(_("cannot write {path}: there is no folder {folder}").format(
            path=path, folder=target.parent))
        return False
    existed = target.exists()
    try:
        with open(target, "a"):
            pass
    except OSError:
        _error(_("{path} cannot be written").format(path=path))
        return False
    if not existed:
        target.unlink()
    return True


def _can_write_in(folder):
    """Whether files can be written in ``folder`` (made when it is missing: its nearest
    existing ancestor must then be a writable folder); else says why (False)."""
    target = Path(folder)
    existing = next(p for p in (target, *target.parents) if p.exists() or p == p.parent)
    if not existing.is_dir():
        _error(_("{path} is not a folder").format(path=existing))
        return False
    if not os.access(existing, os.W_OK | os.X_OK):
        _error(_("cannot write in {folder}").format(folder=existing))
        return False
    return True


def _solution(args):
    key = _torch_key(args.name) if args.torch else args.name
    if key is None:
        return 2
    print(answers.text(key), end="")
    return 0


def _interview(args):
    if args.torch and args.name and _torch_key(args.name) is None:
        return 2
    if not _can_write_in(args.dir):
        return 2
    try:
        exercise = interview.pick(args.name, args.difficulty, args.seed, args.forward_only,
                                   args.torch)
        attempt, _report = interview.interview(exercise, args.minutes, args.dir, args.force,
                                         args.forward_only, wait=not args.no_wait,
                                         torch=args.torch, limits=Limits(timeout=args.timeout))
    except (interview.InterviewError, skeletons.NoForwardOnly) as e:
        _error(e)
        return 2
    except FileExistsError as e:
        _error(e)
        return 1
    except OSError:  # a folder the check above could not see through (root in /proc)
        _error(_("cannot write in {folder}").format(folder=args.dir))
        return 2
    return 2 if attempt.error else (0 if attempt.passed else 1)


def _history(args):
    attempts, problems = history.load()
    for problem in problems:
        print(_fill(_("warning: {problem}").format(problem=problem), ""), file=sys.stderr)
    asked = history.load_asked()
    if args.json:
        sys.stdout.write(history.to_json(attempts, asked=asked))
    else:
        print(history.format_history(attempts))
        if asked:
            print("\n" + history.format_asked(asked))
    return 0


def _questions(args):
    """practice questions: list, show one, or quiz (a terminal) / print (piped) a selection."""
    topics = [t.strip() for option in args.topic or [] for t in option.split(",") if t.strip()]
    unknown = [t for t in topics if t not in questions.TOPICS]
    if unknown:
        _error(_("unknown topic {topics}; expected one of {known}").format(
            topics=", ".join(unknown), known=", ".join(questions.TOPICS)))
        return 2
    if args.id:
        try:
            chosen = [questions.by_id(args.id)]
        except KeyError:
            _error(_("no question {id}; normcore practice questions --list shows them").format(
                id=args.id))
            return 2
    else:
        chosen = questions.select(topics)
        if args.random:
            chosen = quiz.draw(chosen, args.random, args.seed)
    if not chosen:
        _error(_("no question on {topics}").format(topics=", ".join(topics)))
        return 2
    if args.list:
        _list_questions(chosen)
    elif sys.stdin.isatty() and sys.stdout.isatty():
        quiz.quiz(chosen)
    else:
        quiz.print_all(chosen)
    return 0


def _list_questions(chosen):
    """One entry per question: its id and topic, then the question (80 columns)."""
    print(_fill(_("{n} questions (normcore practice questions ID shows one):").format(
        n=len(chosen)), ""))
    for q in chosen:
        print(f"  {q.id}  [{_(questions.TOPIC_TITLES[q.topic])}]")
        print(_fill(q.text("question"), " " * 6))


ACTIONS = {"list": _list, "new": _new, "check": _check, "solution": _solution,
           "interview": _interview, "history": _history, "questions": _questions}
