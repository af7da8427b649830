"""The practice grader on answers written as people publish them (tests/practice_real/,
practice_real2/ and practice_real3/, three corpora by different hands, each written blind to
the grader; the third made to trip it: near-misses of catalogued mistakes, and correct answers
in unusual forms).

The first: homework-style functions with a cache, the staged "nine-step" BatchNorm
backward, ports of d2l, the Annotated Transformer and LLaMA, loops, einsum, Chinese-interview
answers, helper classes beside the answer, PyTorch modules with a forward only. The second:
makemore's manual backward, parameter dicts, JAX-like functions, ports of fusion helpers and
of GPT-2 and BERT code, SyncBatchNorm. MANIFEST.toml labels each file from reading its code
and from a float64 comparison with PyTorch: "pass", the one or two catalogued mistakes it
makes, or "uncatalogued". The grader's promise is checked on every file: a correct answer
passes; a wrong one gets its right name or no name, never another one; and it is graded on
the class the exercise names, whatever helpers the file defines.
"""

import tomllib
from pathlib import Path

import pytest

from normcore.practice import BY_ID, EXERCISES, classroom, grade_file, torch_track
from normcore.practice.report import WIDTH

CORPORA = [Path(__file__).parent / name for name in ("practice_real", "practice_real2", "practice_real3")]
MANIFESTS = {folder: tomllib.loads((folder / "MANIFEST.toml").read_text()) for folder in CORPORA}
FILES = [(folder, name) for folder in CORPORA for name in sorted(MANIFESTS[folder])]
TORCH_MISTAKES = {m.id for m in torch_track.mistakes.TORCH_ONLY}


def _id(item):
    return f"{item[0].name}/{item[1]}"


def _expected_ids(entry):
    return set(entry["expected"]) if isinstance(entry["expected"], list) else set()


@pytest.mark.parametrize("folder", CORPORA, ids=lambda f: f.name)
def test_every_file_is_labelled_with_known_names(folder):
    assert sorted(MANIFESTS[folder]) == sorted(p.name for p in folder.glob("*.py"))
    for name, entry in MANIFESTS[folder].items():
        assert entry["exercise"] in EXERCISES, name
        assert entry["track"] in ("numpy", "torch"), name
        assert entry["expected"] in ("pass", "uncatalogued") or 1 <= len(entry["expected"]) <= 2
        assert _expected_ids(entry) <= set(BY_ID) | TORCH_MISTAKES, name


def _grade(folder, name):
    entry = MANIFESTS[folder][name]
    if entry["track"] == "torch":
        pytest.importorskip("torch")
    return entry, grade_file(folder / name, name=entry.get("name"))


@pytest.mark.parametrize("folder, name", FILES, ids=list(map(_id, FILES)))
def test_a_published_answer_gets_its_verdict_and_never_a_wrong_name(folder, name):
    entry, report = _grade(folder, name)
    assert (report.exercise.name, report.class_name) == (entry["exercise"], entry["class"])
    failing = [(c.label, c.note) for c in report.checks if c.status in ("FAIL", "ERROR")]
    if entry["expected"] == "pass":
        assert report.passed, failing
        return
    assert not report.passed, f"a wrong answer passed: {entry['description']}"
    assert set(report.diagnosis_ids) <= _expected_ids(entry), (
        f"named {report.diagnosis_ids}; the file makes {entry['expected']}: {entry['description']}")


def test_most_catalogued_mistakes_in_published_answers_are_named():
    """The promise above allows "no name" for a catalogued mistake; this keeps it the
    exception: most files with catalogued mistakes get exactly their names (a floor below
    what the grader does today, 90 of 95, so that a change that loses names fails)."""
    pytest.importorskip("torch")
    labelled = [(f, n) for f, n in FILES if _expected_ids(MANIFESTS[f][n])]
    named = [(f, n) for f, n in labelled
             if set(_grade(f, n)[1].diagnosis_ids) == _expected_ids(MANIFESTS[f][n])]
    assert len(named) >= 0.9 * len(labelled), sorted(map(_id, set(labelled) - set(named)))


@pytest.mark.parametrize("folder", CORPORA, ids=lambda f: f.name)
def test_the_corpus_folder_grades_into_one_table(folder):
    """NumPy and PyTorch answers, helper classes and all: one row per file, none refused."""
    pytest.importorskip("torch")
    manifest = MANIFESTS[folder]
    rows = classroom.grade_many(sorted(folder.glob("*.py")))
    assert [Path(r.file).name for r in rows] == sorted(manifest)
    assert all(r.error is None for r in rows), [(r.file, r.error) for r in rows if r.error]
    assert [r.passed for r in rows] == [manifest[Path(r.file).name]["expected"] == "pass"
                                        for r in rows]
    table = classroom.format_table(rows)
    assert max(len(line) for line in table.splitlines()) <= WIDTH
