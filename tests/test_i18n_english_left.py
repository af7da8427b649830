"""No English word left in what a Chinese user reads on the command line: every --help, the
practice actions' output, every explain step-through, gradcheck's labels, the tour and bench
(``test_i18n_cli.py`` checks the last ones with ``english_words`` too). What stays English is
code, formulas, layer names, the names a user types, and the short list ``KEPT_ENGLISH``
(``i18n_checks.py``) says why each of its words does."""

import re

import pytest

from i18n_checks import english_runs, english_words, run_cli, typed_names, wide_lines
from normcore import cli, i18n
from normcore.derivations import KINDS, step_through
from normcore.derivations.tape import Joined, Phrase
from normcore.layer_cases import all_cases

TYPED = typed_names()
PRACTICE_ACTIONS = ["list", "new", "check", "solution", "interview", "history"]


def run(argv, capsys):
    """(exit status, everything printed) of ``normcore argv`` in this process."""
    status, out, err = run_cli(argv, capsys)
    return status, out + err


def test_english_words_finds_a_word_and_spares_code_names_and_kept_terms():
    assert english_words("BatchNorm1d 无移动统计量, eval  3  通过") == ["eval"]
    assert english_words("位置参数 buffers 已断开梯度") == ["buffers"]
    assert english_words("用 L = sum(y * dy) 检查 LayerNorm，见 my_layernorm.py 和 x_hat") == []
    assert english_words("每个 rank 的 token", allowed=()) == []
    assert english_words("训练 inverted dropout", allowed={"dropout"}) == ["inverted"]


@pytest.mark.parametrize("argv", [[], *([c] for c in cli.COMMANDS), *(["practice", a] for a in PRACTICE_ACTIONS)],
                         ids=lambda a: " ".join(a) or "normcore")
def test_a_chinese_help_has_no_english_word(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    status, zh = run(["--lang", "zh", *argv, "--help"], capsys)
    assert status == 0 and not wide_lines(zh)
    assert english_words(zh, TYPED) == [], zh
    assert "usage:" not in zh and "位置参数:" not in zh and "选项:" not in zh  # argparse's own words too
    assert english_words(run([*argv, "--help"], capsys)[1], TYPED)  # it sees English where it is


def _code(said):
    """The code and formulas in what a step-through says: a Phrase's fields (its message is
    prose), a list's items, a plain string (a formula) itself."""
    if isinstance(said, Phrase):
        return [c for value in said.fields.values() for c in _code(value)]
    if isinstance(said, Joined):
        return [c for item in said.items for c in _code(item)]
    if isinstance(said, (list, tuple)):
        return [c for item in said for c in _code(item)]
    return [str(said)] if isinstance(said, str) else []


def symbols(st):
    """Every name in the formulas of a step-through: its nodes, their rules and local
    derivatives, its compact backward, its notes' and properties' formulas."""
    code = _code([st.compact, st.what, st.notes, [p for p, *_ in st.properties]])
    for node in st.tape.nodes:
        code += [node.name, str(node.formula)]
        code += [c for edge in node.edges for value in vars(edge).values() for c in _code(value)]
    return {word for text in code for word in re.findall(r"[A-Za-z]+", text)}


@pytest.mark.parametrize("kind", KINDS)
def test_an_explain_step_through_in_chinese_has_no_english_word(kind):
    i18n.set_language("zh")
    st = step_through(kind, seed=0)
    text = st.text(width=80, latex=False)
    assert english_words(text, TYPED | symbols(st)) == [], text


def test_the_gradcheck_labels_are_said_in_chinese():
    i18n.set_language("zh")
    shown = [case.shown for case in all_cases(0)]
    assert "BatchNorm1d 无移动统计量，推理" in shown and "GELU（精确）" in shown
    assert [w for label in shown for w in english_words(label, TYPED)] == []
    i18n.set_language("en")
    assert [case.shown for case in all_cases(0)] == [case.label for case in all_cases(0)]


def test_practice_in_chinese_has_no_english_word(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    outputs = [run(["--lang", "zh", "practice", *argv], capsys) for argv in (
        ["list"], ["new", "batchnorm"], ["check", "my_batchnorm.py"], ["history"])]
    for status, zh in outputs:
        assert status in (0, 1) and not wide_lines(zh), zh
        assert english_words(zh, TYPED) == [], zh
    assert english_runs(outputs[1][1]) == []
