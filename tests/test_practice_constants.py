"""Mistakes with a constant (normcore/practice/constants.py): an answer that makes a catalogued
mistake with another constant than the catalog's (log(p + 1e-5) instead of 1e-12, a clip at
1e-6, a hard-coded momentum, a hard-coded keep probability, a hard-coded alpha) is named, and
the report says the constant found; a constant the probes cannot pin down is never said.

The answers in tests/practice_constants/ are written as candidates write them, in several
styles, each with its constant in the file; the value the grader reports is the roundest
number its window allows (constants.Kind.window), which for these files is the file's own.
"""

import csv
import io
import json
from pathlib import Path

import pytest

from normcore.practice import constants, format_report, grade_file
from normcore.practice.catalog import Anchor
from normcore.practice.classroom import format_table, grade_many, to_csv, to_json
from normcore.practice.constants import FRACTION, SMALL, At, Constant, WithConstant

HERE = Path(__file__).parent
FILES = HERE / "practice_constants"

# file -> (the mistake named, the constant's name, the value the file writes)
EXPECTED = {
    "ce_eps_1e-5_compact.py": ("ce-log-eps", "eps", 1e-5),
    "ce_eps_1e-7_staged.py": ("ce-log-eps", "eps", 1e-7),
    # so small an eps gives the numbers a clip at 1e-15 gives: the report says both names
    "ce_eps_1e-15_loops.py": ("ce-log-eps", "clip/eps", 1e-15),
    "ce_eps_3e-9_search.py": ("ce-log-eps", "eps", 3e-9),
    "ce_clip_1e-6.py": ("ce-log-eps", "clip", 1e-6),
    "ce_clip_1e-8_maximum.py": ("ce-log-eps", "clip", 1e-8),
    "torch_ce_eps_1e-5.py": ("ce-log-eps", "eps", 1e-5),
    "torch_ce_clamp_1e-8.py": ("ce-log-eps", "clip", 1e-8),
    "bn_momentum_0.9_compact.py": ("bn-momentum-hard-coded", "momentum", 0.9),
    "bn_momentum_0.01_staged.py": ("bn-momentum-hard-coded", "momentum", 0.01),
    "bn_momentum_0.075_search.py": ("bn-momentum-hard-coded", "momentum", 0.075),
    "bn_momentum_0.05_none_handled.py": ("bn-momentum-hard-coded", "momentum", 0.05),
    "torch_bn_momentum_0.3.py": ("bn-momentum-hard-coded", "momentum", 0.3),
    "dropout_keep_0.5_cs231n.py": ("dropout-p-is-keep", "keep", 0.5),
    "dropout_keep_0.8.py": ("dropout-p-is-keep", "keep", 0.8),
    "torch_dropout_keep_0.9.py": ("dropout-p-is-keep", "keep", 0.9),
    "dyt_alpha_0.8.py": ("dyt-alpha-init-ignored", "alpha", 0.8),
    "torch_dyt_alpha_2.py": ("dyt-alpha-init-ignored", "alpha", 2.0),
}
# how the full and the brief report say each constant
SAID = {"eps": "with eps = {value!r} inside the log",
        "clip": "with the probabilities clipped at {value!r}",
        "momentum": "with momentum = {value!r} hard-coded (the new batch's weight)",
        "keep": "with the keep probability {value!r} hard-coded",
        "alpha": "with alpha = {value!r} hard-coded",
        "clip/eps": "with clip/eps = {value!r} (the probes cannot tell which)"}


def test_every_fixture_is_listed():
    assert sorted(p.name for p in FILES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_mistake_with_another_constant_is_named_with_that_constant(name):
    mistake, constant, value = EXPECTED[name]
    if name.startswith("torch_"):
        pytest.importorskip("torch")
    report = grade_file(FILES / name)
    assert not report.passed
    assert report.diagnosis_ids == [mistake]
    found, fitted = report.constants[mistake]
    assert (found.name, fitted) == (constant, value)
    said = SAID[constant].format(value=value)
    for hints in ("full", "brief"):
        lines = [line.strip() for line in format_report(report, hints).splitlines()]
        assert said in lines, (hints, lines)
    assert said not in format_report(report, "none")


def test_the_catalogs_own_constant_is_named_as_before_and_said():
    """log(p + 1e-12), the catalog's default: the same name as before, with its constant; a
    clip at 1e-12 gives the same numbers on every probe, so the report says both names."""
    report = grade_file(HERE / "practice_bugs" / "ce-log-eps@probs.py")
    assert report.diagnosis_ids == ["ce-log-eps"]
    constant, value = report.constants["ce-log-eps"]
    assert (constant.name, value) == ("clip/eps", 1e-12)
    assert "with clip/eps = 1e-12 (the probes cannot tell which)" in format_report(report)


def _variant(tmp_path, name, old, new):
    source = (Path(constants.__file__).parent / "solutions" / f"{name}.py").read_text()
    assert source.count(old) == 1
    path = tmp_path / f"{name}.py"
    path.write_text(source.replace(old, new))
    return path


def test_a_momentum_hard_coded_in_the_reference_answer_is_named_with_it(tmp_path):
    path = _variant(tmp_path, "batchnorm",
                    "m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum",
                    "m = 0.2")
    report = grade_file(path)
    assert report.diagnosis_ids == ["bn-momentum-hard-coded"]
    assert report.constants["bn-momentum-hard-coded"][1] == 0.2


def test_a_mistake_at_the_catalogs_other_default_says_its_constant_too(tmp_path):
    """np.ones(1) for alpha: the catalog's variant at 1, named as before and said with 1.0."""
    path = _variant(tmp_path, "dyt", "np.full(1, alpha_init, dtype)", "np.ones(1, dtype)")
    report = grade_file(path)
    assert report.diagnosis_ids == ["dyt-alpha-init-ignored"]
    assert report.constants["dyt-alpha-init-ignored"][1] == 1.0
    assert "with alpha = 1.0 hard-coded" in format_report(report, "brief")


def test_an_eps_that_is_zero_in_float64_is_the_log_of_softmax_not_an_eps(tmp_path):
    """1e-400 is 0.0 in float64: log(p + 1e-400) is log(p), and the grader says so."""
    path = _variant(tmp_path, "cross_entropy",
                    "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))",
                    "logp = np.log(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True) + 1e-400)")
    report = grade_file(path)
    assert report.diagnosis_ids == ["ce-log-of-softmax"] and report.constants == {}


def test_an_eps_too_small_to_show_on_any_probe_passes(tmp_path):
    """An eps added where it cannot change a number (the sum of exponentials is at least 1):
    the answer is right on every probe, so it passes and no constant is said."""
    path = _variant(tmp_path, "cross_entropy",
                    "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))",
                    "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True) + 1e-30)")
    report = grade_file(path)
    assert report.passed and report.diagnosis_ids == [] and report.constants == {}


def test_an_answer_no_constant_reproduces_names_nothing(tmp_path):
    """eps inside the log AND a summed loss: no single mistake at any eps gives these numbers
    (pairs are not fitted), so nothing is named rather than a wrong constant."""
    path = _variant(tmp_path, "cross_entropy", "loss = -logp[rows, self.targets].mean()",
                    "loss = -np.log(self.p[rows, self.targets] + 1e-5).sum()")
    report = grade_file(path)
    assert not report.passed and report.diagnosis_ids == [] and report.constants == {}


# --- the rule, on a file whose numbers a range of values reproduces -----------------------------
EPS = Constant("eps", 1e-12, SMALL, "with eps = {value} inside the log")
MOMENTUM = Constant("momentum", 0.9, FRACTION, "momentum = {value}")
ANCHOR = Anchor("line", "x")


class _Mistake:
    def __init__(self, variants):
        self.variants = {"ex": variants}


class _Mutants:
    key = "ex"

    def __init__(self, **variants):
        self.mistakes = {mistake_id: _Mistake(v) for mistake_id, v in variants.items()}


class _File:
    """A stand-in for diagnosis._File: a mutant reproduces the answer when its constant's value
    is in ``reproducing[mistake id]`` (lo, hi)."""

    probes, users, changed = (), {}, set()

    def __init__(self, **reproducing):
        self.reproducing = reproducing

    def reproduced_by(self, key):
        (mistake_id, k), = key
        lo, hi = self.reproducing.get(mistake_id, (1.0, 0.0))
        return isinstance(k, At) and lo <= k.value <= hi

    def changes(self, key):
        return set()


def _text(constant):
    return WithConstant("x + {" + constant.name + "}", constant)


def test_a_constant_pinned_down_is_named_with_its_roundest_value():
    mutants = _Mutants(a=[((ANCHOR, _text(EPS)),)])
    keys = constants.fit(_File(a=(4.999e-7, 5.001e-7)), mutants)
    assert [k for (_, k), in keys] == [At(0, 5e-7)]


def test_values_the_probes_cannot_tell_apart_name_nothing():
    """Every eps from 1e-9 to 1e-6 reproduces the answer alike: the probes cannot tell the
    constant, so no constant (and no mistake) is named."""
    mutants = _Mutants(a=[((ANCHOR, _text(EPS)),)])
    assert constants.fit(_File(a=(1e-9, 1e-6)), mutants) == []


def test_two_mistakes_that_reproduce_alike_at_some_constants_name_nothing():
    mutants = _Mutants(a=[((ANCHOR, _text(EPS)),)], b=[((ANCHOR, _text(MOMENTUM)),)])
    assert constants.fit(_File(a=(1e-5, 1e-5), b=(0.3, 0.3)), mutants) == []
    assert len(constants.fit(_File(a=(1e-5, 1e-5)), mutants)) == 1


def test_the_catalogs_text_is_the_text_at_the_default():
    """A WithConstant is the variant's text at the catalog's default: nothing named before
    changes."""
    text = WithConstant("np.log(p + {eps})", EPS)
    assert text == "np.log(p + 1e-12)" and text.at(1e-5) == "np.log(p + 1e-05)"
    assert constants.variant_at([(("a", text),)], At(0, 3e-9)) == (("a", "np.log(p + 3e-09)"),)


# --- the classroom records the constant ---------------------------------------------------------
def test_the_classroom_row_records_the_constant_found():
    rows = grade_many([str(FILES / "ce_eps_1e-5_compact.py"), str(FILES / "dropout_keep_0.8.py")])
    assert [r.mistakes for r in rows] == [["ce-log-eps"], ["dropout-p-is-keep"]]
    records = json.loads(to_json(rows))
    assert records[0]["constants"] == {"ce-log-eps": {"eps": 1e-5}}
    assert records[1]["constants"] == {"dropout-p-is-keep": {"keep": 0.8}}
    table = list(csv.DictReader(io.StringIO(to_csv(rows))))
    assert table[0]["mistakes"] == "ce-log-eps"
    assert table[0]["constants"] == "ce-log-eps(eps=1e-05)"
    assert "ce-log-eps (eps=1e-05)" in format_table(rows)
    assert "eps=" not in format_table(rows, hints="none")


def test_the_constant_is_said_in_chinese_within_80_columns():
    from normcore import i18n
    from normcore.i18n.width import display_width
    report = grade_file(FILES / "ce_eps_1e-5_compact.py")
    with i18n.speaking("zh"):
        for hints in ("full", "brief"):
            text = format_report(report, hints)
            assert "log 里加的 eps = 1e-05" in text
            assert max(map(display_width, text.splitlines())) <= 80
    report = grade_file(FILES / "bn_momentum_0.01_staged.py")
    with i18n.speaking("zh"):
        assert "momentum 写死为 0.01（新 batch 的权重）" in format_report(report)
