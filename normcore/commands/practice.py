"""``normcore practice``: interview practice. Write a norm layer by hand, get graded, learn which
mistake you made.

    normcore practice list [--mistakes]
    normcore practice new NAME [--dir DIR] [--force]
    normcore practice check FILE [--name CLASS] [--layer NAME]
    normcore practice solution NAME

``check`` exits with 0 when every check passes, 1 when one fails (or is not implemented yet)
and 2 when the file cannot be graded (missing, does not import, no layer class).
"""

import importlib.resources
import textwrap
from pathlib import Path

from ..practice import CATALOG, EXERCISES, CannotGrade, grade_file, mistakes_for
from ..practice.grader import format_report, solution_source


def add_arguments(parser):
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    p = sub.add_parser("list", help="the exercises (and the catalog of mistakes with --mistakes)")
    p.add_argument("--mistakes", action="store_true", 
                   help="also list every catalogued mistake with its symptom")
    p = sub.add_parser("new", help="write my_NAME.py, a skeleton to fill in")
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--dir", default=".", help="where to write it (default: the current directory)")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    p = sub.add_parser("check", help="grade your file against normcore's own layer (exit status 1 on a failure)")
    p.add_argument("file", help="your Python file")
    p.add_argument("--name", metavar="CLASS", help="the class to grade (default: the file's one layer class)")
    p.add_argument("--layer", choices=list(EXERCISES), help="the exercise it is (default: from the class name)")
    p = sub.add_parser("solution", help="print a reference answer")
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    parser.set_defaults(_parser=parser)


def run(args):
    if args.action is None:
        args._parser.print_help()
        return 0
    return {"list": _list, "new": _new, "check": _check, "solution": _solution}[args.action](args)


def _list(args):
    width = max(map(len, EXERCISES))
    print("Exercises (normcore practice new NAME):")
    for name, ex in EXERCISES.items():
        print(f"  {name:<{width}}  {ex.summary}  [{len(mistakes_for(name))} catalogued mistakes]")
    if args.mistakes:
        print(f"\nCatalogued mistakes ({len(CATALOG)}):")
        for m in CATALOG:
            print(f"  {m.id}: {m.title}  [{', '.join(m.exercises)}]")
            print(textwrap.fill(f"symptom: {m.symptom}", 100, initial_indent=" " * 6, subsequent_indent=" " * 6))
    else:
        print(f"\n{len(CATALOG)} catalogued mistakes: normcore practice list --mistakes")
    return 0


def _new(args):
    target = Path(args.dir) / f"my_{args.name}.py"
    if target.exists() and not args.force:
        print(f"{target} already exists: not overwritten (use --force to replace it)")
        return 1
    target.parent.mkdir(parents=True, exist_ok=True)
    skeletons = importlib.resources.files("normcore.practice.skeletons")
    skeleton = skeletons.joinpath(f"{args.name}.py").read_text()
    target.write_text(skeleton.replace("THIS_FILE.py", str(target)))
    print(f"wrote {target}: fill in forward and backward, then run\n    normcore practice check {target}")
    return 0


def _check(args):
    try:
        report = grade_file(args.file, name=args.name, layer=args.layer)
    except CannotGrade as e:
        print(f"cannot grade: {e}")
        return 2
    print(format_report(report))
    return 0 if report.passed else 1


def _solution(args):
    print(solution_source(args.name), end="")
    return 0
