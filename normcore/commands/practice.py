"""``normcore practice``: interview practice. Write a norm layer by hand, get graded, learn which
mistake you made.

    normcore practice list [--mistakes]
    normcore practice new NAME [--dir DIR] [--force] [--forward-only | --torch]
    normcore practice check FILE [--name CLASS] [--layer NAME] [--json FILE|-] [--csv FILE|-]
    normcore practice check FILE FILE ... | DIR  [--json FILE|-] [--csv FILE|-]
        (both with [--forward-only] [--hints none|brief|full])
    normcore practice solution NAME [--torch]
    normcore practice interview [NAME] [--minutes M] [--dir DIR] [--difficulty LEVEL] [--seed N]
    normcore practice history [--json]

``check`` exits with 0 when every check passes, 1 when one fails (or is not implemented yet)
and 2 when a file cannot be graded (missing, does not import, no layer class). One file gets
the detailed report; several (or a folder) one summary table (``practice/classroom.py``).
"""

import argparse
import contextlib
import importlib.util
import io
import sys
import textwrap
from pathlib import Path

from ..practice import CATALOG, EXERCISES, CannotGrade, classroom, grade_file, mistakes_for
from ..practice import history, interview, skeletons, torch_track
from ..practice.loading import NEEDS_TORCH
from ..practice.exercises import DIFFICULTY, path
from ..practice.grader import format_report, solution_source
from ..practice.report import HINT_LEVELS

WIDTH = 80  # every line list and the catalog print fits in 80 columns


def _sub(sub, name, help_, description, example):
    """A subcommand whose --help shows a description and an example."""
    return sub.add_parser(name, help=help_, description=textwrap.fill(description, WIDTH - 2),
                          epilog="example:\n" + textwrap.indent(example.strip("\n"), "  "),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_arguments(parser):
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = ("example, from easy to hard:\n  normcore practice list\n"
                     "  normcore practice new dropout\n  normcore practice check my_dropout.py\n"
                     "grading a class:\n  normcore practice check submissions/ --csv results.csv")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    p = _sub(sub, "list", "the exercises, easy to hard (and the catalog with --mistakes)",
             "The exercises in the order to practise them, easy to hard, each with its "
             "difficulty, its time box and what it asks; with --mistakes, every mistake the "
             "grader can name, with its symptom.",
             "normcore practice list\nnormcore practice list --mistakes")
    p.add_argument("--mistakes", action="store_true",
                   help="also list every catalogued mistake with its symptom")
    p = _sub(sub, "new", "write my_NAME.py, a skeleton to fill in",
             "Write my_NAME.py: the exercise's class with its contract, a worked numeric "
             "example in the docstring, and forward/backward left as TODOs.",
             "normcore practice new layernorm --dir ~/practice")
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--dir", default=".", help="where to write it (default: the current directory)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p.add_argument("--forward-only", action="store_true",
                   help="ask for the forward alone: no backward in the skeleton (e.g. "
                        "normcore practice new layernorm --forward-only)")
    p.add_argument("--torch", action="store_true",
                   help="a torch.nn.Module with forward only, written my_NAME_torch.py "
                        f"({', '.join(torch_track.EXERCISES)})")
    p.epilog += "\n  normcore practice new layernorm --torch"
    p = _sub(sub, "check", "grade files against normcore's own layers (exit 1 on a failure)",
             "Grade a file against normcore's own layer and name the catalogued mistake behind "
             "each failing check. Several files, or a folder (every *.py in it), give one summary "
             "table: file, exercise, checks passed, mistakes named; --json and --csv write the "
             "same rows for a course's records. Exit status: 0 when every file passes, 1 when "
             "one fails (or is not implemented yet), 2 when one cannot be graded (missing, does "
             "not import, no layer class).",
             "normcore practice check my_layernorm.py\n"
             "normcore practice check submissions/ --json results.json --csv -")
    p.add_argument("files", nargs="+", metavar="FILE", help="a Python file, or a folder of them")
    p.add_argument("--name", metavar="CLASS",
                   help="the class to grade in each file (default: the file's layer class)")
    p.add_argument("--layer", choices=list(EXERCISES), metavar="NAME",
                   help=f"the exercise it is ({', '.join(EXERCISES)}; default: from the class "
                        "name); one file only")
    p.add_argument("--json", metavar="FILE|-", help="also write the results as a JSON list (- for stdout)")
    p.add_argument("--csv", metavar="FILE|-", help="also write the results as CSV (- for stdout)")
    p.add_argument("--forward-only", action="store_true",
                   help="grade the forward alone: the backward's checks are 'not asked' (a file "
                        "with FORWARD_ONLY = True, or no backward method, is graded so anyway)")
    p.add_argument("--hints", choices=list(HINT_LEVELS), default="full",
                   help="full (default): each mistake's symptom, hint and where normcore "
                        "teaches it; brief: the mistakes' names and the checks they show in; "
                        "none: pass or fail per check (e.g. --hints brief)")
    p = _sub(sub, "solution", "print a reference answer",
             "Print a reference answer: NumPy only, forward and backward, in the names of the "
             "skeleton's docstring.",
             "normcore practice solution rmsnorm > rmsnorm_answer.py")
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--torch", action="store_true", help="the PyTorch track's answer (an nn.Module)")
    p.epilog += "\n  normcore practice solution layernorm --torch"
    p = _sub(sub, "interview", "a mock interview: a time box, no hints, graded at the end",
             "A mock interview: write the skeleton of NAME (or of an exercise drawn at random, of "
             "--difficulty if given), print the time box, wait until you press Enter (or stdin "
             "closes) or the time is up, then grade the file with no hints, say whether it was "
             "over time and record the attempt in the history ($NORMCORE_HOME, else "
             "~/.normcore/, practice_history.jsonl); normcore practice history shows it, with "
             "the mistakes named.",
             "normcore practice interview layernorm --minutes 20\n"
             "normcore practice interview --difficulty easy --dir ~/practice")
    p.add_argument("name", nargs="?", choices=list(EXERCISES), metavar="NAME",
                   help="the exercise (default: one at random); " + ", ".join(EXERCISES))
    p.add_argument("--minutes", type=_minutes, metavar="M",
                   help="the time box in minutes (default: the exercise's, as practice list "
                        "shows; e.g. --minutes 20)")
    p.add_argument("--dir", default=".", help="where to write my_NAME.py (default: the current "
                                              "directory)")
    p.add_argument("--difficulty", choices=list(interview.LEVELS),
                   help="draw the exercise among the easy, medium or hard ones")
    p.add_argument("--seed", type=int, help="seed the random draw (e.g. --seed 3)")
    p.add_argument("--force", action="store_true", help="overwrite an existing my_NAME.py")
    p.add_argument("--forward-only", action="store_true", help="ask for the forward alone")
    p.add_argument("--torch", action="store_true",
                   help="answer as a torch.nn.Module, forward only (e.g. normcore practice "
                        "interview layernorm --torch)")
    p.add_argument("--no-wait", action="store_true",
                   help="do not wait for Enter: grade at once (for scripts)")
    p = _sub(sub, "history", "the mock interviews so far, and progress per exercise",
             "The mock interviews recorded by normcore practice interview: date, exercise, "
             "minutes taken of the time box, checks passed and the mistakes the grade named "
             "(hidden during the interview); then per exercise the first, the latest and the "
             "best attempt.",
             "normcore practice history\nnormcore practice history --json > interviews.json")
    p.add_argument("--json", action="store_true", help="print the attempts and progress as JSON")
    parser.set_defaults(_parser=parser)


def _minutes(text):
    """--minutes: a positive number of minutes, or argparse's clear error."""
    try:
        return interview.check_minutes(text)
    except interview.InterviewError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run(args):
    if args.action is None:
        args._parser.print_help()
        return 0
    return {"list": _list, "new": _new, "check": _check, "solution": _solution,
            "interview": _interview, "history": _history}[args.action](args)


def _error(message):
    print(textwrap.fill(f"error: {message}", WIDTH, subsequent_indent="  ",
                        break_on_hyphens=False), file=sys.stderr)


def _fill(text, indent):
    return textwrap.fill(text, WIDTH, initial_indent=indent, subsequent_indent=indent,
                         break_on_hyphens=False)


def _list(args):
    width = max(map(len, EXERCISES))
    print("The path, easy to hard (normcore practice new NAME):")
    for step, ex in enumerate(path(), 1):
        level = f"{ex.difficulty} {DIFFICULTY[ex.difficulty]}"
        print(f"  {step:>2}. {ex.name:<{width}}  {level:<8}  {ex.minutes:>2} min  "
              f"{len(mistakes_for(ex.name)):>2} catalogued mistakes")
        print(_fill(ex.summary, " " * 8))
    torch_only = torch_track.mistakes.TORCH_ONLY
    if args.mistakes:
        for title, mistakes in ((f"Catalogued mistakes ({len(CATALOG)})", CATALOG),
                                (f"PyTorch track only ({len(torch_only)}; with --torch, the "
                                 "forward mistakes above too)", torch_only)):
            print(f"\n{title}:")
            for m in mistakes:
                print(textwrap.fill(f"{m.id}: {m.title}  [{', '.join(m.exercises)}]", WIDTH,
                                    initial_indent="  ", subsequent_indent=" " * 6,
                                    break_on_hyphens=False))
                print(_fill(f"symptom: {m.symptom}", " " * 6))
    else:
        print(f"\n{len(CATALOG)} catalogued mistakes, {len(torch_only)} more for PyTorch: "
              "normcore practice list --mistakes")
    return 0


def _torch_key(name):
    """'torch/NAME' for the PyTorch track, None (and a message) when it has no such exercise."""
    if name in torch_track.EXERCISES:
        return f"torch/{name}"
    print(_fill(f"the PyTorch track has no {name} exercise yet; it has "
                f"{', '.join(torch_track.EXERCISES)}", ""), file=sys.stderr)
    return None


def _new(args):
    if args.torch and _torch_key(args.name) is None:
        return 2
    try:
        target = skeletons.write(args.name, args.dir, args.force, args.forward_only, args.torch)
    except FileExistsError as e:
        print(e)
        return 1
    except skeletons.NoForwardOnly as e:
        _error(e)
        return 2
    ex = EXERCISES[args.name]
    todo = skeletons.what_to_fill(args.name, args.forward_only, args.torch)
    if args.torch and importlib.util.find_spec("torch") is None:
        print(f"note: the file {NEEDS_TORCH}")
    print(f"wrote {target}: fill in {todo}, then run\n    normcore practice check {target}\n"
          f"{DIFFICULTY[ex.difficulty]}, time box {ex.minutes} min; the docstring has a worked example")
    return 0


def _check(args):
    files = classroom.files_in(args.files)
    single = len(args.files) == 1 and not Path(args.files[0]).is_dir()
    if not single and args.layer:
        print("error: --layer applies to a single FILE, not to several files or a folder",
              file=sys.stderr)
        return 2
    if args.json == args.csv == "-":
        print("error: only one of --json and --csv can write to stdout (-)", file=sys.stderr)
        return 2
    if not files:
        print(f"cannot grade: no *.py files in {', '.join(args.files)}")
        return 2
    to_stdout = "-" in (args.json, args.csv)
    if single:
        try:  # what the file prints must not garble JSON or CSV written to stdout
            with contextlib.redirect_stdout(io.StringIO()) if to_stdout else contextlib.nullcontext():
                report = grade_file(files[0], name=args.name, layer=args.layer,
                                    forward_only=args.forward_only)
        except CannotGrade as e:
            rows = [classroom.Row(files[0], error=str(e))]
            if not to_stdout:
                print(f"cannot grade: {e}")
        else:
            rows = [classroom.row_of(report)]
            if not to_stdout:
                print(format_report(report, args.hints))
    else:
        rows = classroom.grade_many(files, name=args.name, forward_only=args.forward_only)
        if not to_stdout:
            print(classroom.format_table(rows, hints=args.hints))
    for option, write in ((args.json, classroom.to_json), (args.csv, classroom.to_csv)):
        if option == "-":
            sys.stdout.write(write(rows))
        elif option:
            Path(option).write_text(write(rows))
    return classroom.exit_status(rows)


def _solution(args):
    key = _torch_key(args.name) if args.torch else args.name
    if key is None:
        return 2
    print(solution_source(key), end="")
    return 0


def _interview(args):
    try:
        exercise = interview.pick(args.name, args.difficulty, args.seed, args.forward_only)
        attempt, _ = interview.interview(exercise, args.minutes, args.dir, args.force,
                                         args.forward_only, wait=not args.no_wait,
                                         torch=args.torch)
    except (interview.InterviewError, skeletons.NoForwardOnly) as e:
        _error(e)
        return 2
    except FileExistsError as e:
        _error(e)
        return 1
    return 2 if attempt.error else (0 if attempt.passed else 1)


def _history(args):
    attempts, problems = history.load()
    for problem in problems:
        print(_fill(f"warning: {problem}", ""), file=sys.stderr)
    if args.json:
        sys.stdout.write(history.to_json(attempts))
    else:
        print(history.format_history(attempts))
    return 0
