"""When no catalogued mistake, nor any combination, reproduces an answer, the grader lists
the mistakes that each give some of its failing numbers: apart from the diagnosis, said as
unsure, never as a name. The grader stays never confidently wrong: no check carries one of
these names, and an answer the diagnosis names, or a correct one, gets no such list.
"""

from pathlib import Path

import pytest

from normcore import i18n
from normcore.practice import format_report, grade_file
from normcore.practice.catalog import BY_ID
from normcore.practice.mutants import apply_variant, solution_source

HERE = Path(__file__).parent
# three mistakes at once that no mistake or combination reproduces, and one each list has
THREE = [("layernorm", ("ln-over-batch", "backward-no-xhat-term", "eps-outside-sqrt"), "ln-over-batch"),
         ("layernorm", ("ln-over-batch", "var-unbiased-in-normalization", "grad-assigned"),
          "grad-assigned")]


def _answer(folder, exercise, mistakes):
    """A file: the reference answer of ``exercise`` with each of ``mistakes`` made in it."""
    source = solution_source(exercise)
    for mistake in mistakes:
        source = apply_variant(source, BY_ID[mistake].variants[exercise][0])
    path = folder / f"my_{exercise}_{len(mistakes)}.py"
    path.write_text(source)
    return path


@pytest.mark.parametrize(("exercise", "mistakes", "listed"), THREE)
def test_three_mistakes_no_diagnosis_names_get_an_unsure_list_apart(exercise, mistakes, listed,
                                                                    tmp_path):
    report = grade_file(_answer(tmp_path, exercise, mistakes))
    assert not report.passed and report.diagnosis_ids == []
    assert not any(c.diagnoses for c in report.checks)  # no check carries a name
    ids = [mistake_id for mistake_id, _checks in report.partly]
    assert listed in ids and len(ids) == len(set(ids))
    for _mistake_id, checks in report.partly:
        assert checks and all(c.status == "FAIL" for c in checks)
    text = format_report(report)
    unsure = text.index("Most likely mistakes (unsure, not a diagnosis)")
    assert f"[{listed}]" in text[unsure:] and f"[{listed}]" not in text[:unsure]
    assert "reproduces" not in text[unsure:]
    assert all(len(line) <= 80 for line in text.splitlines())
    brief = format_report(report, "brief")
    assert "Most likely mistakes" in brief and f"[{listed}]" in brief
    assert "Most likely mistakes" not in format_report(report, "none") and listed not in format_report(
        report, "none")
    i18n.set_language("zh")
    try:
        chinese = format_report(report)
    finally:
        i18n.set_language("en")
    assert "最可能的错误" in chinese and "不确定" in chinese


def test_a_named_mistake_or_a_correct_but_unusual_answer_gets_no_unsure_list(tmp_path):
    for unusual in (HERE / "practice_alt" / "batchnorm_staged.py",  # a staged backward
                    HERE / "practice_verdicts" / "dyt_liger_float32.py"):  # float32 inside
        report = grade_file(unusual)
        assert report.passed and report.partly == []
        assert "Most likely" not in format_report(report)
    named = grade_file(_answer(tmp_path, "layernorm", ("ln-over-batch",)))
    assert named.diagnosis_ids == ["ln-over-batch"] and named.partly == []
    pair = grade_file(_answer(tmp_path, "batchnorm", ("eps-outside-sqrt", "backward-no-mean-term")))
    assert pair.diagnosis_ids == ["backward-no-mean-term", "eps-outside-sqrt"] and pair.partly == []
