"""The command line in Chinese: every help, argparse's own words, the tour, gradcheck's and
compare's tables, the errors; all within 80 display columns, no English sentence falling
through, the same numbers in both languages, and English runs unchanged beside Chinese ones in
one process."""

import argparse
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from i18n_checks import english_runs, english_words, run_cli, typed_names, wide_lines
from normcore import cli, experiments, i18n
from normcore.commands import compare
from normcore.derivations import KINDS, step_through
from normcore.i18n.width import display_width
from normcore.layer_cases import all_cases
from normcore.notebooks import listing

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = list(cli.COMMANDS)
MINE = list(COMMANDS)  # practice's texts are the practice domain's, checked here as well
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
# names that are English words and are printed as they are, in lists (the experiments, the
# computations explain steps through, the first words of the layers' labels...)
NAMES = [*COMMANDS, *experiments.EXPERIMENTS, *KINDS, *compare.MODELS,
         *{c.label.split()[0] for c in all_cases(0)}]


run = run_cli  # (exit status, stdout, stderr) of ``normcore argv`` in this process


def numbers(text):
    """The numbers in ``text``, as a multiset: what a change of language must leave alone."""
    return Counter(NUMBER.findall(text))


def chinese(text):
    return len(re.findall(r"[\u4e00-\u9fff]", text))


# --- the reusable check itself ------------------------------------------------------------------
def test_english_runs_finds_a_sentence_and_spares_code_formulas_and_names():
    assert english_runs("MultiheadSelfAttention, not causal, key padding") == ["not causal key padding"]
    assert english_runs("用 L = sum(y * dy) 的中心差分检查 BatchNorm1d (N, C, H, W)，默认 1e-7") == []
    assert english_runs("示例：\n  normcore explain layernorm --shape 2x4 --no-latex\n") == []
    assert english_runs("BatchNorm1d no running stats, eval  3  通过") == ["no running stats eval"]
    assert english_runs("BatchNorm1d no running stats, eval  3  通过",
                        allowed=["BatchNorm1d no running stats, eval"]) == []
    assert english_runs("the whole tour 完整") == ["the whole tour"]
    assert wide_lines("层" * 40 + "\n" + "层" * 41) == ["层" * 41]


# --- every --help, in both languages ----------------------------------------------------------
def _help(argv, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal; a test has none
    status, out, _ = run(argv + ["--help"], capsys)
    assert status == 0
    return out


@pytest.mark.parametrize("argv", [[]] + [[c] for c in COMMANDS], ids=lambda a: " ".join(a) or "normcore")
def test_every_help_fits_80_columns_in_both_languages(argv, capsys, monkeypatch):
    english = _help(argv, capsys, monkeypatch)
    zh = _help(["--lang", "zh", *argv], capsys, monkeypatch)
    assert not wide_lines(english) and not wide_lines(zh), "\n".join(wide_lines(zh))
    assert english.startswith("usage: ") and "options:" in english
    assert zh.startswith("用法： ") and "\n选项：\n" in zh and chinese(zh) > 20
    assert "show this help message and exit" in english and "显示此帮助信息并退出" in zh
    example = zh[zh.index("示例"):]  # 示例： or 示例，由易到难：
    assert f"normcore {' '.join(argv)}".rstrip() in example
    assert _help(argv, capsys, monkeypatch) == english  # English again, unchanged by Chinese


@pytest.mark.parametrize("argv", [[]] + [[c] for c in MINE], ids=lambda a: " ".join(a) or "normcore")
def test_no_english_sentence_falls_through_a_chinese_help(argv, capsys, monkeypatch):
    zh = _help([*argv, "--lang", "zh"], capsys, monkeypatch)  # --lang after the command, too
    assert english_runs(zh, allowed=NAMES) == [], zh
    assert english_runs(_help(argv, capsys, monkeypatch), allowed=NAMES)  # it sees English where it is


@pytest.mark.parametrize("variable", ["NORMCORE_LANG=zh", "LANG=zh_CN.UTF-8"])
def test_the_environment_chooses_chinese_for_a_subprocess(variable):
    name, value = variable.split("=")
    env = {k: v for k, v in os.environ.items() if k not in ("NORMCORE_LANG", "LC_ALL", "LC_MESSAGES")}
    env.update({name: value, "COLUMNS": "80", "PYTHONPATH": str(ROOT)})
    done = subprocess.run([sys.executable, "-m", "normcore", "tour", "--help"], capture_output=True,
                          text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("用法： normcore tour") and "随机输入的种子" in done.stdout
    assert not wide_lines(done.stdout) and english_runs(done.stdout) == []


# --- argparse's errors, and normcore's own -------------------------------------------------------
ERRORS = [
    (["gradcheck", "--seed", "-1"], ["参数 --seed", "应为 >= 0 的整数"]),
    (["gradcheck", "--tol", "0"], ["参数 --tol", "应为 > 0 的数"]),
    (["explain", "no_such_norm"], ["参数 NAME", "没有名为 'no_such_norm' 的逐步推导"]),
    (["explain", "layernorm", "--shape", "20x20"], ["参数 --shape", "最多只接受 256 个值"]),
    (["explain", "layernorm", "--step", "--summary"], ["参数 --summary", "不能与参数 --step 同时使用"]),
    (["compare"], ["缺少以下必需参数：MODEL"]),
    (["compare", "no-such-model"], ["参数 MODEL", "未知的"]),
    (["tour", "--bogus"], ["无法识别的参数：--bogus"]),
    (["no-such-command"], ["无效的选择"]),
    (["gradcheck", "--only", "nothing"], ["参数 --only", "匹配不到任何层"]),
    (["figures", "no_such_experiment"], ["参数 NAME", "未知的实验"]),
]


@pytest.mark.parametrize("argv, words", ERRORS, ids=[" ".join(argv) for argv, _ in ERRORS])
def test_errors_speak_chinese_within_80_columns(argv, words, capsys):
    status, out, err = run(["--lang", "zh", *argv], capsys)
    assert status == 2 and "所有梯度均通过" not in out
    assert all(w in err for w in words) and "错误" in err, err
    assert not wide_lines(err) and english_runs(err, allowed=NAMES) == [], err
    status, _, english = run(argv, capsys)  # the same mistake in English, in the same process
    assert status == 2 and "error" in english and "错误" not in english


@pytest.mark.parametrize("template", cli.ARGPARSE_ERRORS)
def test_every_argparse_error_is_read_back_and_rewritten_in_chinese(template):
    fields = {"argument_name": "--seed", "message": "expected one argument", "option": "--s",
              "matches": "--seed, --shape", "value": "'x'", "choices": "'a', 'b'", "type": "int",
              "parser_name": "'y'"}
    message = re.sub(r"%\((\w+)\)[sr]", lambda f: fields[f.group(1)], template).replace("%s", "--a --b")
    message = message.replace("%r", "'z'")
    assert cli.argparse_in_language(message) == message  # English: argparse's own message
    i18n.set_language("zh")
    zh = cli.argparse_in_language(message)
    assert chinese(zh) and numbers(zh) == numbers(message)
    assert all(value in zh for value in ("--seed", "--s", "'x'", "int", "--a --b", "'z'", "'y'") if value in message)
    assert "expected one argument" not in zh


def test_argparse_speaks_chinese_only_inside_normcore_parser(capsys):
    i18n.set_language("zh")
    assert "用法" in cli.build_parser().format_usage()
    plain = argparse.ArgumentParser(prog="other").format_help()  # anyone else's parser
    assert plain.startswith("usage: other") and "show this help message and exit" in plain
    i18n.set_language("en")
    assert cli.build_parser().format_usage().startswith("usage: normcore")


# --- the tour, gradcheck and compare ---------------------------------------------------------
def _few_cases(seed=0):
    """The tour's layers cut down to a few of each kind (gradcheck's own tests check them all):
    labels with words to translate, shapes, a block."""
    wanted = ("BatchNorm1d no running stats, eval", "LayerNorm (N,C,H,W) over (C,H,W)", "DyT no affine (alpha only)",
              "Dropout p=0.3 eval", "GELU (exact)", "TransformerBlock encoder post")
    return [c for c in all_cases(seed) if c.label in wanted]


def test_tour_speaks_chinese_within_80_columns_with_the_numbers_of_the_english_one(monkeypatch, capsys):
    """The done-when of the translation: ``normcore --lang zh tour`` (LANG=zh_CN.UTF-8 chooses
    the same language: test_the_environment_chooses_chinese_for_a_subprocess). The derivation it
    shows is the explain domain's; names (the layers' labels, the notebooks' titles) are quoted
    as they are."""
    monkeypatch.setattr("normcore.commands.tour.all_cases", _few_cases)
    status, zh, err = run(["--lang", "zh", "tour"], capsys)
    assert status == 0, err
    headings = ["1. 每个梯度都经过检查", "2. 一个梯度，一次一个节点", "3. notebook 与图", "4. 下一步运行什么"]
    for heading in headings:
        assert f"\n{heading}\n{'-' * display_width(heading)}\n" in zh  # underlined by display width
    i18n.set_language("zh")
    derivation = step_through("layernorm", shape=(2, 3), seed=0).text(width=80, latex=False)
    assert english_words(zh.replace(derivation, ""), typed_names()) == []  # the labels said in Chinese
    for name, title in listing():  # each notebook once: its Chinese edition, or marked 英文
        assert f"  {name}：" in zh and (name.endswith("_zh.ipynb") or title.endswith("（英文）"))
    table = zh[zh.index(headings[0]):zh.index(headings[1])]
    assert len([line for line in table.splitlines() if line.endswith("  通过")]) == len(_few_cases(0)) == 6
    assert "所有梯度均通过" in table

    # The English tour, run once for both languages' checks: its layout, what it points at, and
    # the same numbers as the Chinese one.
    status, english, _ = run(["tour"], capsys)
    assert status == 0 and numbers(english) == numbers(zh)
    lines = english.splitlines()
    assert max(len(line) for line in lines) <= 80
    for section in ("1. Every gradient, checked", "2. One gradient, one node at a time",
                    "3. Notebooks and figures", "4. What to run next"):
        assert section in lines
    assert "all gradients pass" in english and "normcore explain batchnorm" in english
    for path in list((ROOT / "notebooks").glob("*.ipynb")) + list((ROOT / "figures").glob("*.png")):
        assert path.name in english  # the tour points at every notebook and figure of the clone


def test_gradcheck_prints_the_same_numbers_in_both_languages_aligned_by_display_width(capsys):
    argv = ["gradcheck", "--only", "LayerNorm ("]  # the three LayerNorm cases, not every block with one
    _, english, _ = run(argv, capsys)
    status, zh, _ = run(["--lang", "zh", *argv], capsys)
    assert status == 0 and numbers(english) == numbers(zh)
    assert zh.splitlines()[0].split() == ["层", "/", "张量", "形状", "相对误差", "结果"]
    rows = [line for line in zh.splitlines() if line.endswith("通过")]
    assert len(rows) == len([line for line in english.splitlines() if line.endswith("pass")]) > 3
    head = zh.splitlines()[0]
    column = display_width(head[:head.index("结果")])
    assert {display_width(line[:line.rindex(" ") + 1]) for line in rows} == {column}
    assert not wide_lines(zh) and english_words(zh, typed_names()) == []
    assert "归一化层中 weight 即 gamma" in zh and "所有梯度均通过（容差 1e-07）" in zh


def test_compare_prints_the_same_numbers_in_both_languages(capsys):
    pytest.importorskip("torch")
    for argv in (["compare", "layernorm"], ["compare", "attention", "--eval"]):
        _, english, _ = run(argv, capsys)
        status, zh, _ = run([*argv, "--lang", "zh"], capsys)
        assert status == 0 and numbers(english) == numbers(zh)
        assert "全部一致" in zh.splitlines() and "all match" in english.splitlines()
        assert not wide_lines(zh) and english_runs(zh, allowed=NAMES) == [], zh
        assert zh.count("\n输出 ") == 1 and "\n输入梯度 " in zh and " 的梯度 " in zh


def test_compare_on_an_optimizer_speaks_chinese_with_the_numbers_of_the_english_table(capsys):
    pytest.importorskip("torch")
    argv = ["compare", "adam-amsgrad"]
    _, english, _ = run(argv, capsys)
    status, zh, _ = run([*argv, "--lang", "zh"], capsys)
    assert status == 0 and numbers(english) == numbers(zh)
    assert zh.splitlines()[0] == "Adam 对照 torch.optim，float64，5 步" and "全部一致" in zh.splitlines()
    assert not wide_lines(zh) and english_runs(zh, allowed=NAMES) == [], zh
    status, _, err = run(["--lang", "zh", *argv, "--eval"], capsys)  # refused: an optimizer has no mode
    assert status == 2 and "adam-amsgrad 是优化器" in err
    assert not wide_lines(err) and english_runs(err, allowed=NAMES) == [], err


def test_bench_tables_speak_chinese_within_80_columns():
    """A tiny benchmark (no PyTorch) in Chinese: its explanations and tables, aligned by display
    width; a time is measured anew each run, so only the layout is compared with English."""
    from normcore.perf.bench import run_bench
    tiny = dict(shapes=((16, 32),), repeats=1, step_repeats=1, warmup=1,
                transformer=dict(vocab_size=11, d_model=16, n_layers=1, n_heads=2, batch=2, length=5),
                learning=dict(n_tokens=2, n_symbols=4, d_model=8, n_layers=1, n_heads=2, steps=3,
                              batch_size=4, lr=1e-2, warmup=1))
    i18n.set_language("zh")
    lines = []
    run_bench(torch=None, out=lines.append, **tiny)
    zh = "\n".join(lines)
    assert not wide_lines(zh), "\n".join(wide_lines(zh))
    assert english_words(zh, typed_names()) == [], zh
    assert "下限" in zh and "阶段" in zh and "快速层级的目标" in zh and "不含 PyTorch" in zh
    header, phases, rule = lines[lines.index("") + 1:lines.index("") + 4]
    assert display_width(header) == len(rule) and set(rule) == {"-"}  # underlined by display width
    assert display_width(phases[:phases.index("ms") + 2]) == 8 + 7  # phase, then the floor in ms
    assert [line.split()[0] for line in lines if line.startswith(("前向", "反向", "前反向"))][:3] == [
        "前向", "反向", "前反向"]
