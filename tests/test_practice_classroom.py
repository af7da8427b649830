"""Grading a class (``normcore practice check`` on several files or a folder), the path through
the exercises, the 80-column output, and the worked examples in the skeletons' docstrings.

Check counts are never written down here: they come from grading the same file with
``grade_file``, so adding checks to an exercise does not break these tests.
"""

import argparse
import ast
import csv
import doctest
import importlib.util
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from normcore.cli import build_parser, main
from normcore.practice import EXERCISES, grade_file
from normcore.practice.classroom import FIELDS, format_table, grade_many, shorten
from normcore.practice.exercises import path as the_path

HERE = Path(__file__).parent
ROOT = HERE.parent
SKELETONS = ROOT / "normcore" / "practice" / "skeletons"
SOLUTIONS = ROOT / "normcore" / "practice" / "solutions"


def _generator():
    spec = importlib.util.spec_from_file_location("practice_bugs_generate",
                                                  HERE / "practice_bugs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The generated bug files, written for this module's tests."""
    return _generator().write(tmp_path_factory.mktemp("generated"))


@pytest.fixture
def buggy(generated):
    """A reference answer with one catalogued mistake (the flipped BatchNorm momentum)."""
    return next(p for p in generated if p.name == "bn-momentum-flipped@batchnorm.0.py")


def narrow(text, width=80):
    return [line for line in text.splitlines() if len(line) > width]


@pytest.fixture
def klass(tmp_path, capsys, buggy):
    """A class's folder: a correct answer, a buggy one, an untouched skeleton, a broken file."""
    folder = tmp_path / "submissions"
    folder.mkdir()
    assert main(["practice", "solution", "layernorm"]) == 0
    (folder / "alice.py").write_text(capsys.readouterr().out)
    shutil.copy(buggy, folder / "bob.py")
    assert main(["practice", "new", "rmsnorm", "--dir", str(tmp_path)]) == 0
    shutil.move(tmp_path / "my_rmsnorm.py", folder / "carol.py")
    (folder / "dave.py").write_text("import numpy as np\nclass LayerNorm:\n    def forward(self, x)\n")
    (folder / "notes.txt").write_text("not graded: not a .py file\n")
    capsys.readouterr()
    return folder


def expected(folder):
    """What each record must say, from grading each file on its own."""
    rows = {}
    for name in ("alice", "bob", "carol"):
        report = grade_file(folder / f"{name}.py")
        rows[name] = dict(exercise=report.exercise.name, passed=report.passed,
                          checks_total=len(report.checks),
                          checks_passed=sum(c.status in ("pass", "n/a") for c in report.checks),
                          mistakes=report.mistake_ids, variants=report.variants)
    return rows


def test_a_folder_gives_one_table_within_80_columns_and_exit_2(klass, capsys):
    assert main(["practice", "check", str(klass)]) == 2
    out = capsys.readouterr().out
    assert not narrow(out)
    lines = out.splitlines()
    want = expected(klass)
    table = {line.split()[0]: line for line in lines if line.split() and line.split()[0].endswith(".py")}
    assert list(table) == ["alice.py", "bob.py", "carol.py", "dave.py"]  # sorted, notes.txt left out
    for name in ("alice", "bob", "carol"):
        row = table[f"{name}.py"].split()
        w = want[name]
        assert row[1] == w["exercise"] and row[2] == f"{w['checks_passed']}/{w['checks_total']}"
    assert table["alice.py"].split()[3:] == ["-"]
    assert table["bob.py"].split()[3] == "bn-momentum-flipped"
    assert table["carol.py"].split()[3] == "-" and "todo: forward, backward" in out
    assert "dave.py" in table and "cannot grade: does not compile" in table["dave.py"]
    assert lines[-1] == "4 files: 1 pass, 2 fail, 1 cannot be graded"
    assert "Traceback" not in out


def test_json_and_csv_records(klass, tmp_path, capsys):
    target = tmp_path / "results.json"
    assert main(["practice", "check", str(klass), "--json", str(target), "--csv", "-"]) == 2
    out = capsys.readouterr().out
    records = json.loads(target.read_text())
    rows = list(csv.DictReader(io.StringIO(out)))  # stdout holds the CSV only, no table
    assert [Path(r["file"]).name for r in records] == ["alice.py", "bob.py", "carol.py", "dave.py"]
    assert [r["file"] for r in rows] == [r["file"] for r in records]
    want = expected(klass)
    for record, row in zip(records, rows):
        assert tuple(record) == FIELDS and tuple(row) == FIELDS
        name = Path(record["file"]).stem
        if name == "dave":
            assert record["error"].startswith(str(klass / "dave.py") + " does not compile")
            assert "\n" not in record["error"] and row["error"] == record["error"]
            assert record["exercise"] is None and record["passed"] is False and record["mistakes"] == []
            continue
        w = want[name]
        assert record["error"] is None and row["error"] == ""
        assert {k: record[k] for k in w} == w
        assert record["class"] == {"alice": "LayerNorm", "bob": "BatchNorm1d", "carol": "RMSNorm"}[name]
        assert row["passed"] == str(w["passed"]) and int(row["checks_passed"]) == w["checks_passed"]
        assert row["mistakes"].split() == w["mistakes"]
        assert row["variants"].split() == w["variants"]


def test_exit_status_0_all_pass_1_a_failure_2_cannot_grade(klass, tmp_path, capsys):
    alice, bob, dave = (str(klass / f"{n}.py") for n in ("alice", "bob", "dave"))
    shutil.copy(alice, tmp_path / "alice2.py")
    assert main(["practice", "check", alice, str(tmp_path / "alice2.py")]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "2 files: 2 pass, 0 fail"
    assert main(["practice", "check", alice, bob]) == 1
    assert main(["practice", "check", alice, bob, dave]) == 2
    capsys.readouterr()
    # a file named that does not exist is refused before any file is graded
    assert main(["practice", "check", alice, str(tmp_path / "missing.py")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "".join(err.split()) == "".join(f"error:{tmp_path / 'missing.py'}:nosuchfileorfolder")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["practice", "check", str(empty)]) == 2
    assert "no *.py files" in capsys.readouterr().out


def test_one_file_keeps_the_detailed_report_and_json_works_for_it(klass, capsys):
    from normcore.practice.grader import format_report
    bob = str(klass / "bob.py")
    assert main(["practice", "check", bob]) == 1
    assert capsys.readouterr().out == format_report(grade_file(bob)) + "\n"
    assert main(["practice", "check", bob, "--json", "-"]) == 1
    [record] = json.loads(capsys.readouterr().out)
    # Keras' momentum convention: a published variant, recorded apart from the mistakes
    assert record["variants"] == ["bn-momentum-flipped"] and record["mistakes"] == []
    assert record["passed"] is False


def test_layer_applies_to_one_file_only_and_name_to_each_file(klass, capsys):
    assert main(["practice", "check", str(klass), "--layer", "layernorm"]) == 2
    assert "applies to a single FILE" in capsys.readouterr().err
    assert main(["practice", "check", str(klass / "alice.py"), "--name", "LayerNorm"]) == 0
    capsys.readouterr()
    # --name with several files: each is graded on its class of that name, or says it has none
    assert main(["practice", "check", str(klass / "alice.py"), str(klass / "bob.py"),
                 "--name", "LayerNorm"]) == 2
    out = capsys.readouterr().out
    assert "alice.py" in out and "layernorm" in out
    assert "no class named LayerNorm" in out and "BatchNorm1d" in out


def test_a_file_that_prints_or_exits_does_not_garble_or_stop_the_class(tmp_path, capsys):
    source = (SOLUTIONS / "rmsnorm.py").read_text()
    (tmp_path / "a.py").write_text("print('hello from a')\n" + source)
    (tmp_path / "b.py").write_text("import sys\nsys.exit(3)\n")
    assert main(["practice", "check", str(tmp_path), "--json", "-"]) == 2
    records = json.loads(capsys.readouterr().out)
    assert records[0]["passed"] is True
    assert "b.py: the process exited (sys.exit(3)) while importing the file" in records[1]["error"]


def test_long_paths_are_shortened_to_80_columns(tmp_path, capsys, buggy):
    deep = tmp_path.joinpath(*["a_rather_long_folder_name"] * 4)
    deep.mkdir(parents=True)
    other = tmp_path / "x"
    other.mkdir()
    shutil.copy(buggy, deep / ("a_student_with_a_very_long_file_name_" * 2 + ".py"))
    shutil.copy(HERE / "practice_bugs" / "var-unbiased-in-normalization@groupnorm-loops.py",
                deep / "b.py")
    (other / "c.py").write_text("x = 1 / 0\n")
    files = [str(f) for f in sorted(deep.glob("*.py"))] + [str(other / "c.py")]
    assert main(["practice", "check", *files]) == 2
    out = capsys.readouterr().out
    assert not narrow(out) and ".../b.py" in out and "cannot grade: importing c.py raised" in out
    assert shorten("/a/b/c/d/student.py", 14) == ".../student.py"
    assert len(shorten("x" * 50 + ".py", 20)) == 20


def test_table_of_rows_stays_within_80_columns_with_many_mistakes(generated):
    rows = grade_many([str(p) for p in generated[:6]])
    assert not narrow(format_table(rows))


# --- the path, the catalog and the help ---------------------------------------------------------
def test_every_exercise_states_difficulty_and_time_box():
    for ex in EXERCISES.values():
        assert ex.difficulty in (1, 2, 3) and 5 <= ex.minutes <= 60, ex.name
    order = [(e.difficulty, e.minutes) for e in the_path()]
    assert order == sorted(order) and len(order) == len(EXERCISES)


def test_list_shows_the_path_easy_to_hard_within_80_columns(capsys):
    assert main(["practice", "list"]) == 0
    out = capsys.readouterr().out
    assert not narrow(out)
    positions = [out.index(f". {e.name} ") for e in the_path()]
    assert positions == sorted(positions)
    assert all(f"{e.minutes} min" in out for e in EXERCISES.values())
    assert "easy" in out and "hard" in out
    assert main(["practice", "list", "--mistakes"]) == 0
    assert not narrow(capsys.readouterr().out)


def _practice_actions():
    """Every subcommand of ``normcore practice``, read from the parser (none can be missed)."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    practice = commands.choices["practice"]
    actions = next(a for a in practice._actions if isinstance(a, argparse._SubParsersAction))
    return list(actions.choices)


@pytest.mark.parametrize("action", _practice_actions())
def test_every_practice_subcommand_help_has_a_description_and_an_example(action, capsys):
    with pytest.raises(SystemExit) as done:
        main(["practice", action, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    usage, description = out.split("\n\n")[:2]
    assert len(description.split()) >= 8
    assert f"example:\n  normcore practice {action}" in out
    assert not narrow(out)
    if action == "check":
        flat = " ".join(out.split())
        assert "0 when every file passes, 1 when one fails" in flat and "2 when one cannot be graded" in flat


# --- the worked examples in the skeletons -------------------------------------------------------
def worked_example(name):
    doc = ast.get_docstring(ast.parse((SKELETONS / f"{name}.py").read_text()), clean=False)
    return doctest.DocTestParser().get_examples(doc)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_worked_example_is_recomputed_with_normcore_own_layer(name):
    """Every expected value in the skeleton's docstring, recomputed with normcore's layer."""
    examples = worked_example(name)
    wanted = [e for e in examples if e.want]
    assert len(wanted) >= 2, f"{name}: the skeleton's docstring has no worked example"
    ns = {"np": np, EXERCISES[name].class_name: EXERCISES[name].reference}
    for example in examples:
        if not example.want:
            exec(example.source, ns)
            continue
        got = eval(example.source, ns)
        want = ast.literal_eval(example.want.strip())
        np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                                   rtol=0, atol=6e-5, err_msg=f"{name}: {example.source.strip()}")
    assert any(isinstance(ast.literal_eval(e.want.strip()), list) for e in wanted)


@pytest.mark.parametrize("name", list(EXERCISES))
def test_worked_example_passes_as_a_doctest_on_the_reference_answer(name):
    """What the docstring promises: ``python -m doctest`` passes once the layer is right."""
    ns = {}
    exec((SOLUTIONS / f"{name}.py").read_text(), ns)
    doc = ast.get_docstring(ast.parse((SKELETONS / f"{name}.py").read_text()), clean=False)
    test = doctest.DocTestParser().get_doctest(doc, ns, name, None, 0)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(test, out=lambda text: None)
    assert runner.failures == 0 and runner.tries >= 5
