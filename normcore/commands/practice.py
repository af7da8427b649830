"""``normcore practice``: interview practice. Write a norm layer by hand, get graded, learn which
mistake you made.

    normcore practice list [--mistakes]
    normcore practice new NAME [--dir DIR] [--force] [--torch]
    normcore practice check FILE [--name CLASS] [--layer NAME] [--json FILE|-] [--csv FILE|-]
    normcore practice check FILE FILE ... | DIR  [--json FILE|-] [--csv FILE|-]
    normcore practice solution NAME [--torch]

``check`` exits with 0 when every check passes, 1 when one fails (or is not implemented yet)
and 2 when a file cannot be graded (missing, does not import, no layer class). One file gets
the detailed report; several (or a folder) one summary table (``practice/classroom.py``).
"""

import argparse
import contextlib
import importlib.resources
import importlib.util
import io
import sys
import textwrap
from pathlib import Path

from ..practice import CATALOG, EXERCISES, CannotGrade, classroom, grade_file, mistakes_for, torch_track
from ..practice.loading import NEEDS_TORCH
from ..practice.exercises import DIFFICULTY, path
from ..practice.grader import format_report, solution_source

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
                   help="the class to grade (default: the file's one layer class); one file only")
    p.add_argument("--layer", choices=list(EXERCISES), metavar="NAME",
                   help=f"the exercise it is ({', '.join(EXERCISES)}; default: from the class "
                        "name); one file only")
    p.add_argument("--json", metavar="FILE|-", help="also write the results as a JSON list (- for stdout)")
    p.add_argument("--csv", metavar="FILE|-", help="also write the results as CSV (- for stdout)")
    p = _sub(sub, "solution", "print a reference answer",
             "Print a reference answer: NumPy only, forward and backward, in the names of the "
             "skeleton's docstring.",
             "normcore practice solution rmsnorm > rmsnorm_answer.py")
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--torch", action="store_true", help="the PyTorch track's answer (an nn.Module)")
    p.epilog += "\n  normcore practice solution layernorm --torch"
    parser.set_defaults(_parser=parser)


def run(args):
    if args.action is None:
        args._parser.print_help()
        return 0
    return {"list": _list, "new": _new, "check": _check, "solution": _solution}[args.action](args)


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
    if args.mistakes:
        print(f"\nCatalogued mistakes ({len(CATALOG)}):")
        for m in CATALOG:
            print(textwrap.fill(f"{m.id}: {m.title}  [{', '.join(m.exercises)}]", WIDTH,
                                initial_indent="  ", subsequent_indent=" " * 6,
                                break_on_hyphens=False))
            print(_fill(f"symptom: {m.symptom}", " " * 6))
    else:
        print(f"\n{len(CATALOG)} catalogued mistakes: normcore practice list --mistakes")
    return 0


def _torch_key(name):
    """'torch/NAME' for the PyTorch track, None (and a message) when it has no such exercise."""
    if name in torch_track.EXERCISES:
        return f"torch/{name}"
    print(_fill(f"the PyTorch track has no {name} exercise yet; it has "
                f"{', '.join(torch_track.EXERCISES)}", ""), file=sys.stderr)
    return None


def _new(args):
    key = _torch_key(args.name) if args.torch else args.name
    if key is None:
        return 2
    target = Path(args.dir) / f"my_{args.name}{'_torch' * args.torch}.py"
    if target.exists() and not args.force:
        print(f"{target} already exists: not overwritten (use --force to replace it)")
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    skeletons = importlib.resources.files("normcore.practice.skeletons")
    skeleton = skeletons.joinpath(f"{key}.py").read_text()
    target.write_text(skeleton.replace("THIS_FILE.py", str(target)))
    ex = EXERCISES[args.name]
    todo = ex.class_name if ex.function else "forward" if args.torch else "forward and backward"
    if args.torch and importlib.util.find_spec("torch") is None:
        print(f"note: the file {NEEDS_TORCH}")
    print(f"wrote {target}: fill in {todo}, then run\n    normcore practice check {target}\n"
          f"{DIFFICULTY[ex.difficulty]}, time box {ex.minutes} min; the docstring has a worked example")
    return 0


def _check(args):
    files = classroom.files_in(args.files)
    single = len(args.files) == 1 and not Path(args.files[0]).is_dir()
    if not single and (args.name or args.layer):
        print("error: --name and --layer apply to a single FILE, not to several files or a folder",
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
                report = grade_file(files[0], name=args.name, layer=args.layer)
        except CannotGrade as e:
            rows = [classroom.Row(files[0], error=str(e))]
            if not to_stdout:
                print(f"cannot grade: {e}")
        else:
            rows = [classroom.row_of(report)]
            if not to_stdout:
                print(format_report(report))
    else:
        rows = classroom.grade_many(files)
        if not to_stdout:
            print(classroom.format_table(rows))
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
