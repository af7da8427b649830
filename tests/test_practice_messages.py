"""What ``practice check`` says of a file it cannot grade: within 80 display columns, in English
and in Chinese, and naming the class (or the function) the exercise expects."""

import pytest

from normcore.cli import main
from normcore.i18n.width import display_width


def _check(tmp_path, capsys, name, text, *options):
    path = tmp_path / name
    path.write_text(text)
    assert main([*options, "practice", "check", str(path)]) == 2
    out = capsys.readouterr().out
    assert all(display_width(line) <= 80 for line in out.splitlines()), out
    return " ".join(out.split())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_file_without_its_class_is_told_which_class_within_80_columns(tmp_path, capsys, lang):
    said = _check(tmp_path, capsys, "my_layernorm.py", "import numpy as np\n", "--lang", lang)
    assert "LayerNorm" in said and "layernorm" in said
    expected = {"en": "cannot grade: expected a class LayerNorm with forward and backward methods, "
                      "or a torch.nn.Module subclass LayerNorm with a forward method",
                "zh": "无法评分：应有一个带 forward 和 backward 方法的类 LayerNorm"}
    assert expected[lang] in said


def test_the_expected_class_is_the_layer_asked_for_else_the_file_names(tmp_path, capsys):
    said = _check(tmp_path, capsys, "my_layernorm.py", "X = 1\n")
    assert "expected a class LayerNorm" in said
    path = tmp_path / "answer.py"
    path.write_text("X = 1\n")
    assert main(["practice", "check", "--layer", "rmsnorm", str(path)]) == 2
    assert "expected a class RMSNorm with forward and backward" in " ".join(capsys.readouterr().out.split())
    said = _check(tmp_path, capsys, "my_log_softmax.py", "X = 1\n")
    assert "expected a class LogSoftmax" in said  # the longest name: not Softmax
    said = _check(tmp_path, capsys, "my_fold_batchnorm.py", "X = 1\n")
    assert "expected a function fold_batchnorm" in said


def test_long_reasons_and_the_code_under_them_are_wrapped_at_80_columns(tmp_path, capsys):
    said = _check(tmp_path, capsys, "answer.py",
                  "raise ValueError('a message the candidate wrote, long enough to pass the "
                  "width of a terminal by itself')\n")
    assert "cannot grade: importing" in said and "long enough to pass" in said
    said = _check(tmp_path, capsys, "answer.py", "def f(:\n")
    assert "does not compile" in said and "def f(:" in said
