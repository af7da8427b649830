"""Write the generated bug files: every catalogued mistake applied to its reference answer.

    python tests/practice_bugs/generate.py           # write tests/practice_bugs/generated/
    python tests/practice_bugs/generate.py --check   # exit 1 if a committed file is stale

For every mistake of ``normcore.practice.catalog.CATALOG``, every exercise it applies to and
every variant it has there, the reference answer ``normcore/practice/solutions/<exercise>.py``
with exactly that variant applied (the grader's own ``apply_variant``), its module docstring
replaced by one naming the mistake, goes to ``generated/<id>@<exercise>.<k>.py``, k being the
variant's number. The grader must fail each of these files with exactly its mistake's name
(tests/test_practice.py), so a variant that another mistake's mutant also explains shows up
as a failing test, and a change to a reference answer or to the catalog shows up as stale
files here. Nothing in the catalog is named: a new exercise or mistake is covered as soon as
it is in the catalog and the files are regenerated.

The hand-written bug files next to this script are written independently of the catalog, in
other styles (loops, a staged backward, other names); they are not touched.
"""

import argparse
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = HERE / "generated"
COMMAND = "python tests/practice_bugs/generate.py"

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # runs from a fresh clone without installing normcore

from normcore.practice.catalog import CATALOG  # noqa: E402
from normcore.practice.mutants import apply_variant, solution_source  # noqa: E402


def _docstring(mistake, exercise, k):
    what = textwrap.fill(
        f"Mistake {mistake.id}, variant {k}: normcore/practice/solutions/{exercise}.py with "
        "exactly that variant of normcore/practice/catalog.py applied. The grader must name the "
        "mistake on every failing check.", width=92)
    return (f'"""{mistake.title}.\n\n'
            f"Generated, do not edit: regenerate with `{COMMAND}`.\n"
            f'{what}\n"""\n')


def bug_source(mistake, exercise, k):
    """The reference answer of ``exercise`` with variant ``k`` of ``mistake`` applied, under a
    docstring that names the mistake."""
    source = apply_variant(solution_source(exercise), mistake.variants[exercise][k])
    assert source.startswith('"""'), f"solutions/{exercise}.py does not start with its docstring"
    body = source[source.index('"""', 3) + 3:].lstrip("\n")
    return _docstring(mistake, exercise, k) + "\n" + body


def generated():
    """{file name: source} of every generated bug file, in catalog order."""
    return {f"{m.id}@{exercise}.{k}.py": bug_source(m, exercise, k)
            for m in CATALOG for exercise, variants in m.variants.items()
            for k in range(len(variants))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="only compare the committed files with what the catalog gives")
    args = parser.parse_args(argv)
    files = generated()
    present = {p.name for p in OUT.glob("*.py")} if OUT.is_dir() else set()
    stale = sorted([name for name, text in files.items()
                    if name not in present or (OUT / name).read_text() != text]
                   + sorted(present - set(files)))
    summary = (f"{len(files)} generated bug files, {len({n.split('@')[0] for n in files})} "
               f"mistakes on {len({n.split('@')[1].split('.')[0] for n in files})} exercises")
    if args.check:
        if stale:
            print(f"out of date (run {COMMAND}): " + ", ".join(stale))
            return 1
        print(f"{summary}: all current")
        return 0
    OUT.mkdir(exist_ok=True)
    for name in sorted(present - set(files)):
        (OUT / name).unlink()
    for name in stale:
        if name in files:
            (OUT / name).write_text(files[name])
    where = OUT.relative_to(ROOT) if OUT.is_relative_to(ROOT) else OUT
    print(f"{summary}: {len(stale)} written or removed, under {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
