"""Several catalogued mistakes at once, and mistakes whose backward is derived from their own
forward (tests/practice_combined/, written as candidates write them: loops, a staged backward,
compact NumPy, PyTorch modules).

- three mistakes at once are named together, under the rule a single mistake is named by: the
  combination's mutant gives every number of every probe, and no other combination does;
- a combination across the NumPy catalog's forward mistakes written in torch and the torch-only
  catalog is tried (x.std with its default correction, plus eps added to the std);
- the smallest combination that reproduces the answer is the one named;
- the report says every mistake a check shows together with the others.
"""

import tomllib
from pathlib import Path

import pytest

from normcore.practice import format_report, grade_file

HERE = Path(__file__).parent / "practice_combined"
NAMED = tomllib.loads((HERE / "NAMED.toml").read_text())


def _needs(name):
    if name.startswith("torch-"):
        pytest.importorskip("torch")


@pytest.mark.parametrize("name", sorted(NAMED))
def test_each_file_is_named_with_all_its_mistakes(name):
    _needs(name)
    report = grade_file(HERE / name)
    assert not report.passed
    assert report.diagnosis_ids == sorted(NAMED[name]["mistakes"]), NAMED[name]["why"]
    failing = [c for c in report.checks if c.status == "FAIL"]
    assert all(c.diagnoses and set(c.diagnoses) <= set(report.diagnosis_ids) for c in failing)


def test_every_file_is_listed():
    assert sorted(NAMED) == sorted(p.name for p in HERE.glob("*.py"))
