"""Several catalogued mistakes at once, and mistakes whose backward is derived from their own
forward (tests/practice_combined/, written as candidates write them: loops, a staged backward,
compact NumPy, PyTorch modules).

- three mistakes at once are named together, under the rule a single mistake is named by: the
  combination's mutant gives every number of every probe, and no other combination does;
- a combination across the NumPy catalog's forward mistakes written in torch and the torch-only
  catalog is tried (x.std with its default correction, plus eps added to the std);
- the smallest combination that reproduces the answer is the one named;
- the report says every mistake a check shows together with the others;
- a forward mistake whose backward is the exact derivative of that forward is named
  (tests/practice_consistent/), alone or two at once (a combination of consistent twins).
"""

import tomllib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from normcore.practice import format_report, grade_file

HERE = Path(__file__).parent / "practice_combined"
CONSISTENT = Path(__file__).parent / "practice_consistent"
FOLDERS = (HERE, CONSISTENT)
NAMED = {(folder, name): entry for folder in FOLDERS
         for name, entry in tomllib.loads((folder / "NAMED.toml").read_text()).items()}


def _needs(name):
    if name.startswith("torch-"):
        pytest.importorskip("torch")


@pytest.mark.parametrize("folder, name", sorted(NAMED), ids=[f"{f.name}/{n}" for f, n in sorted(NAMED)])
def test_each_file_is_named_with_all_its_mistakes(folder, name):
    _needs(name)
    report = grade_file(folder / name)
    entry = NAMED[folder, name]
    assert not report.passed
    assert report.diagnosis_ids == sorted(entry["mistakes"]), entry["why"]
    failing = [c for c in report.checks if c.status == "FAIL"]
    assert all(c.diagnoses and set(c.diagnoses) <= set(report.diagnosis_ids) for c in failing)


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda f: f.name)
def test_every_file_is_listed(folder):
    assert sorted(n for f, n in NAMED if f == folder) == sorted(p.name for p in folder.glob("*.py"))


# --- the search itself, on made-up mutants: each mistake adds its own change to the numbers ---

class _Probe:
    def __init__(self, label):
        self.label = label


ROWS = ("a", "b", "c", "d")


class _Mutants:
    """Mutants whose run on the one probe is the reference (zeros) plus each part's change;
    ``override`` gives a combination numbers of its own (mistakes that interact)."""

    def __init__(self, effects, override=None):
        self.effects, self.override = effects, override or {}
        self.singles = [((name, 0),) for name in effects]
        # the catalog entries, as constants.py reads them: one variant each, with no constant
        self.key, self.mistakes = "fake", {name: SimpleNamespace(variants={"fake": [()]})
                                           for name in effects}

    def reference(self, probe):
        return _run({})

    def run(self, key, probe):
        ids = frozenset(i for i, _ in key)
        if ids in self.override:
            return _run(self.override[ids])
        total = {}
        for i in ids:
            for row, v in self.effects[i].items():
                total[row] = total.get(row, 0.0) + v
        return _run(total)


def _run(changes):
    from normcore.practice.probes import Observation, ProbeRun
    return ProbeRun({row: Observation(np.array([changes.get(row, 0.0)]), 1e-8, "abs") for row in ROWS})


def _diagnose(user, mutants):
    from normcore.practice.diagnosis import diagnose
    from normcore.practice.grader import CheckResult
    probe = _Probe("p")
    checks = [CheckResult("p", row, "FAIL" if user.get(row) else "pass") for row in ROWS]
    return diagnose([probe], {"p": _run(user)}, checks, mutants), checks


def test_three_mistakes_are_named_when_no_single_or_pair_reproduces():
    named, checks = _diagnose({"a": 1, "b": 2, "c": 4},
                              _Mutants({"x": {"a": 1}, "y": {"b": 2}, "z": {"c": 4}, "w": {"b": 3}}))
    assert named == ["x", "y", "z"]
    assert [c.diagnoses for c in checks[:3]] == [["x"], ["y"], ["z"]]
    assert all(c.combined_with == ["x", "y", "z"] for c in checks[:3])


def test_four_mistakes_are_named_and_five_are_not_tried():
    effects = {name: {row: 2.0 ** k} for k, (name, row) in enumerate(zip("stuv", ROWS))}
    assert _diagnose({"a": 1, "b": 2, "c": 4, "d": 8}, _Mutants(effects))[0] == list("stuv")
    effects["q"] = {"a": 16}
    assert _diagnose({"a": 17, "b": 2, "c": 4, "d": 8}, _Mutants(effects))[0] == []


def test_the_smallest_combination_that_reproduces_is_named():
    """x alone reproduces the answer; y and z together would too: x is named, not y + z. A pair
    wins over a triple alike."""
    effects = {"x": {"a": 1, "b": 2}, "y": {"a": 1}, "z": {"b": 2}}
    assert _diagnose({"a": 1, "b": 2}, _Mutants(effects))[0] == ["x"]
    effects = {"x": {"a": 1, "b": 2}, "v": {"c": 4}, "y": {"a": 1}, "z": {"b": 2}}
    assert _diagnose({"a": 1, "b": 2, "c": 4}, _Mutants(effects))[0] == ["v", "x"]


def test_two_combinations_of_the_smallest_size_that_reproduce_alike_name_nothing():
    effects = {"x": {"a": 1}, "y": {"b": 2}, "z": {"c": 4}, "w": {"b": 1, "c": 4}}
    override = {frozenset("xyw"): {"a": 1, "b": 2, "c": 4}}  # w with y gives b = 2 too
    assert _diagnose({"a": 1, "b": 2, "c": 4}, _Mutants(effects, override))[0] == []


def test_a_part_must_change_only_what_the_answer_changes():
    """z changes d, which the answer leaves as the reference gives it: no combination with z
    is tried, even one that would reproduce every number (z's change cancelled)."""
    effects = {"x": {"a": 1}, "y": {"b": 2}, "z": {"c": 4, "d": 1}}
    override = {frozenset("xyz"): {"a": 1, "b": 2, "c": 4}}
    assert _diagnose({"a": 1, "b": 2, "c": 4}, _Mutants(effects, override))[0] == []


def test_the_report_says_each_mistake_comes_with_the_two_others():
    report = grade_file(HERE / "cross-entropy-three-compact.py")
    text = " ".join(format_report(report).split())
    assert ("reproduces your numbers (together with ce-log-of-softmax, ce-summed-not-averaged)"
            in text)
    assert "(together with ce-log-of-softmax, ce-sign-flipped)" in text
