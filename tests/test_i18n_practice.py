"""Interview practice in Chinese: the skeletons, the check report, the lists and the help.

The grader must name the same mistakes, with the same numbers, whatever the language: each
buggy answer is graded and reported in English and in Chinese and the two are compared. The
Chinese output must speak Chinese (no English prose left but code, formulas, layer names and
mistake ids) within 80 display columns. Buggy answers are the catalog's own mutants, written
by tests/practice_bugs/generate.py as tests/test_practice.py does, one per exercise.
"""

import ast
import io
import tokenize
import dataclasses
import doctest
import importlib.util
import re
import tempfile
from pathlib import Path

import pytest

from normcore import i18n
from normcore.cli import main
from normcore.i18n.catalogs import read_po
from normcore.i18n.width import WIDTH, display_width
from normcore.practice import EXERCISES, grade_file, torch_track
from normcore.practice import report as report_module
from normcore.practice.grader import format_report, solution_source
from normcore.practice.labels import show_label
from normcore.practice import answers, prose
from normcore.practice import skeletons as skeleton_files
from normcore.practice.mutants import tagged_lines
from normcore.practice.skeletons import skeleton

BUG_DIR = Path(__file__).parent / "practice_bugs"
CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
MISTAKE = re.compile(r"\[([a-z0-9-]+)\]")
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")


def _generated():
    """One mutant of the catalog per exercise (the first the generator writes), as files."""
    spec = importlib.util.spec_from_file_location("practice_bugs_generate", BUG_DIR / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first = {}
    for path in module.write(tempfile.mkdtemp(prefix="normcore-i18n-bugs-")):
        first.setdefault(path.stem.split("@")[1].split(".")[0], path)
    return first


BUGS = _generated()
HAND_WRITTEN = [BUG_DIR / "eps-outside-sqrt@layernorm-loops.py",
                BUG_DIR / "backward-no-mean-term@layernorm-staged.py"]


def _in(lang, function, *args):
    """``function(*args)`` with normcore speaking ``lang``."""
    i18n.set_language(lang)
    try:
        return function(*args)
    finally:
        i18n.set_language("en")


def _too_wide(text):
    return [line for line in text.splitlines() if display_width(line) > WIDTH]


# --- the skeleton -----------------------------------------------------------------------------
def _code_and_examples(text):
    """The skeleton's code without its docstrings, and its worked example (the doctests: their
    code, whatever their comments say, and their output)."""
    tree = ast.parse(text)
    examples = [(ast.dump(ast.parse(e.source)), e.want) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                and ast.get_docstring(node, clean=False)
                for e in doctest.DocTestParser().get_examples(ast.get_docstring(node, clean=False))]
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            body[0].value.value = ""
    return ast.dump(tree), examples


def test_new_batchnorm_in_chinese_writes_a_chinese_skeleton_that_runs_and_grades(
        tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["practice", "new", "batchnorm", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert "已写出" in out and not _too_wide(out)
    text = (tmp_path / "my_batchnorm.py").read_text()
    tree = ast.parse(text)
    docs = [ast.get_docstring(n) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(n)]
    assert len(docs) >= 3 and all(CJK.search(doc) for doc in docs)
    todos = [line for line in text.splitlines() if line.strip().startswith("# TODO")]
    assert todos and all(CJK.search(line) for line in todos)
    english = skeleton("batchnorm", "my_batchnorm.py")
    assert _code_and_examples(text) == _code_and_examples(english)  # identifiers, code, example
    namespace = {}
    exec(compile(text, "my_batchnorm.py", "exec"), namespace)  # it loads and runs
    layer = namespace["BatchNorm1d"](3)
    with pytest.raises(NotImplementedError):
        layer.forward(None)
    report = grade_file(tmp_path / "my_batchnorm.py")
    assert report.not_implemented == ["forward", "backward"]


VARIANTS = ([(name, False, False) for name in EXERCISES]
            + [(name, True, False) for name, e in EXERCISES.items() if not e.function]
            + [(name, False, True) for name in torch_track.EXERCISES])


@pytest.mark.parametrize("name, forward_only, torch", VARIANTS,
                         ids=lambda v: str(v) if isinstance(v, str) else ("1" if v else "0"))
def test_every_chinese_skeleton_keeps_the_code_and_the_example_and_translates_the_prose(
        name, forward_only, torch):
    chinese = _in("zh", skeleton, name, "my.py", forward_only, torch)
    english = skeleton(name, "my.py", forward_only, torch)
    assert _code_and_examples(chinese) == _code_and_examples(english)
    tree = ast.parse(chinese)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node):
            assert CJK.search(ast.get_docstring(node)), (name, node.__class__.__name__)
    comments = [line for line in chinese.splitlines() if line.strip().startswith("# TODO")]
    untranslated = [line for line in comments if not CJK.search(line)]  # formulas only, then
    assert not [w for line in untranslated for w in WORD.findall(line.split("TODO:")[1])
                if len(w) > 1 and w not in CODE], untranslated


def test_a_chinese_forward_only_skeleton_still_asks_for_the_forward_alone(tmp_path):
    text = _in("zh", skeleton, "layernorm", "my.py", True)
    assert "FORWARD_ONLY = True  # normcore practice check 只给前向评分" in text
    path = tmp_path / "my_layernorm.py"
    path.write_text(text)
    assert grade_file(path).forward_only


# --- the check report: the same mistakes and numbers in both languages -------------------------
ANSWERS = sorted(BUGS.values()) + HAND_WRITTEN


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.stem)
def test_the_grader_names_the_same_mistakes_with_the_same_numbers_in_both_languages(path):
    english = grade_file(path)
    chinese = _in("zh", grade_file, path)
    assert chinese.diagnosis_ids == english.diagnosis_ids and english.diagnosis_ids
    assert [(c.label, c.status, c.error, c.diagnoses) for c in chinese.checks] == \
        [(c.label, c.status, c.error, c.diagnoses) for c in english.checks]
    for hints in ("full", "brief", "none"):
        en, zh = format_report(english, hints), _in("zh", format_report, english, hints)
        assert MISTAKE.findall(zh) == MISTAKE.findall(en)
        table = [line for line in zh.splitlines() if re.match(r"  \S", line)]
        assert sorted(NUMBER.findall("\n".join(table))) == sorted(
            NUMBER.findall("\n".join(line for line in en.splitlines() if re.match(r"  \S", line))))
        assert re.search(r"(\d+) 项检查：", zh)[1] == re.search(r"(\d+) checks: ", en)[1]
        assert not _too_wide(zh), _too_wide(zh)


# words of the report that are code, formulas or names, not English prose
CODE = {"normcore", "batch", "worker", "logit", "logits", "dtype", "eps", "momentum", "alpha",
        "bias", "axis", "scores", "tanh", "relu", "nan", "inf", "train", "rng", "none", "brief",
        "full", "nn", "Linear", "Tanh", "FeedForward", "False", "None", "Pre", "Post", "Norm",
        "forward", "backward", "notebooks", "ipynb", "explain", "practice", "solution", "check",
        "mean", "var", "sqrt", "exp", "sum", "max", "log", "softmax", "gamma", "beta", "grad",
        "onehot", "keepdims", "self", "merge", "attn", "rrms", "dout", "LN", "ReLU", "RMS",
        "np", "finfo", "autograd", "e5", "len", "Pre-Norm", "Post-Norm", "weight", "pre", "post",
        "F", "WeightNorm", "reordered"}


def _prose(text, report):
    """The English words of a Chinese report that are not code, a formula, a name or a number
    (the catalog's own text is left out: another domain translates it)."""
    names = set(EXERCISES) | {e.class_name for e in EXERCISES.values()}
    names |= {e.reference.__name__ for e in EXERCISES.values()} | set(report.diagnosis_ids)
    names |= set(WORD.findall(report.file))
    words = [w for line in text.splitlines() for w in WORD.findall(line)]
    return sorted({w for w in words if w not in names and w not in CODE and len(w) > 1
                   and not re.search(r"[_0-9]", w) and not re.fullmatch(r"d[a-z]+", w)})


@pytest.mark.parametrize("path", ANSWERS, ids=lambda p: p.stem)
def test_a_chinese_report_has_no_english_prose_left(path, monkeypatch):
    monkeypatch.setattr(report_module, "catalog_text", lambda text: "目录中的说明")
    report = dataclasses.replace(_in("zh", grade_file, path), file="my_answer.py")  # the
    # notes are written as it grades; a short path, which a line may not break
    for hints in ("full", "brief", "none"):
        text = _in("zh", format_report, report, hints)
        assert CJK.search(text)
        assert _prose(text, report) == [], (hints, _prose(text, report))


def test_an_uncatalogued_mistake_gets_chinese_hints(tmp_path, monkeypatch):
    source = solution_source("layernorm").replace("var + self.eps", "var + 10 * self.eps")
    assert "10 * self.eps" in source
    path = tmp_path / "my_layernorm.py"
    path.write_text(source)
    report = dataclasses.replace(_in("zh", grade_file, path), file="my_layernorm.py")
    assert not report.passed and not report.diagnosis_ids
    text = _in("zh", format_report, report)
    assert "目录中没有哪个错误能复现" in text and "提示：" in text and "学习：" in text
    assert _prose(text, report) == [] and not _too_wide(text)


def test_every_check_label_has_its_chinese_words():
    labels = set()
    for name in EXERCISES:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / f"{name}.py"
            path.write_text(solution_source(name))
            labels |= {c.label for c in grade_file(path).checks}
    i18n.set_language("zh")
    left = {w for label in labels for w in WORD.findall(show_label(label))
            if len(w) > 2 and not re.search(r"[_0-9]", w) and not re.fullmatch(r"d[a-z]+", w)}
    assert left <= CODE, left
    assert show_label("train (8, 4): dgamma after two backward calls") == \
        "训练 (8, 4): dgamma 两次反向后"
    i18n.set_language("en")
    assert show_label("running stats (16, 3): running_var after 5 steps") == \
        "running stats (16, 3): running_var after 5 steps"


# --- the lists, the history, the interview, the help -------------------------------------------
@pytest.mark.parametrize("args", [["practice", "list"], ["practice", "list", "--mistakes"],
                                  ["practice", "history"]])
def test_lists_and_history_in_chinese_fit_80_columns(args, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path))
    assert main(["--lang", "zh"] + args) == 0
    out = capsys.readouterr().out
    assert CJK.search(out) and not _too_wide(out), _too_wide(out)


def test_an_interview_and_its_history_in_chinese(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NORMCORE_HOME", "home")
    monkeypatch.chdir(tmp_path)
    args = ["practice", "interview", "rmsnorm", "--no-wait", "--lang", "zh"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "模拟面试：rmsnorm（简单），限时 20 分钟。" in out and "已记录在" in out
    assert not _too_wide(out), _too_wide(out)
    assert main(args + ["--force"]) == 1  # a second attempt: the skeleton again, its TODOs
    assert main(["--lang", "zh", "practice", "history"]) == 0
    out = capsys.readouterr().out
    assert "每个练习的进步" in out and "0/" in out and not _too_wide(out)


@pytest.mark.parametrize("action", ["list", "new", "check", "solution", "interview", "history"])
def test_every_practice_help_in_chinese_fits_and_has_an_example(action, capsys):
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "practice", action, "--help"])
    out = capsys.readouterr().out
    assert "示例：\n  normcore practice " + action in out
    assert CJK.search(out) and not _too_wide(out), _too_wide(out)


@pytest.mark.parametrize("args, message", [
    (["practice", "check", "nothing.py"], "nothing.py：没有这个文件或文件夹"),
    (["practice", "new", "fold_batchnorm", "--forward-only"], "没有“只写前向”的版本"),
    (["practice", "check", "a.py", "b.py", "--layer", "layernorm"], "--layer 只适用于单个 FILE"),
])
def test_practice_errors_in_chinese(args, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--lang", "zh"] + args) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert message in " ".join(text.split()).replace(" ", "") or message in text
    assert not _too_wide(text)


# --- every docstring and comment of a practice file, in Chinese ---------------------------------

SOLUTIONS = answers.keys()
PRACTICE_PO = {m.id: m.string for m in read_po("practice") if m.id}
PHRASE = re.compile(r"(?<![\w.])([A-Za-z]{2,}) (?=([A-Za-z]{2,})(?![\w(]))")  # two words in a row


def _untranslated(english, names=()):
    """The messages of an English practice file the Chinese catalog leaves without Chinese: not
    in it, or kept as they are although they have a phrase of English (two words in a row that
    are no code); a formula kept as it is (``(N, C, *spatial)``) is translated."""
    code = prose.identifiers(english) | set(names) | prose.MATH
    return [m for m in prose.messages(english, names)
            if not PRACTICE_PO.get(m) or PRACTICE_PO[m] == m and _english_phrase(m, code)]


def _english_phrase(text, code):
    """Whether ``text`` has two English words in a row that are not ``code``'s names."""
    return any(a not in code and b not in code for a, b in PHRASE.findall(text))


def _english_comments(text):
    """The comments of ``text`` with English prose and no Chinese ([tag]s and code aside)."""
    code = prose.identifiers(text) | prose.MATH
    return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.COMMENT and not CJK.search(t.string)
            and _english_phrase(t.string.lstrip("#").removeprefix(" TODO:"), code)]


@pytest.mark.parametrize("name, forward_only, torch", VARIANTS,
                         ids=lambda v: str(v) if isinstance(v, str) else ("1" if v else "0"))
def test_every_docstring_paragraph_and_comment_of_a_chinese_skeleton_is_chinese(
        name, forward_only, torch):
    english = skeleton_files._english(name, forward_only, torch)
    names = skeleton_files._names(name, torch)
    assert _untranslated(english.replace(skeleton_files.FORWARD_ONLY_NOTE.format(name=name), ""),
                         names) == []
    chinese = _in("zh", skeleton, name, "my.py", forward_only, torch)
    assert _english_comments(chinese) == []
    assert _wider_than_english(chinese, skeleton(name, "my.py", forward_only, torch)) == []


def _code(text):
    """The program of a file: its AST with the docstrings emptied (comments are no part)."""
    return _code_and_examples(text)[0]


def _wider_than_english(chinese, english):
    """The Chinese lines wider than the file allows: prose wider than the skeletons' width,
    code with a comment wider than the English file's widest line."""
    widest = max(display_width(line) for line in english.splitlines())
    return [line for line in chinese.splitlines() if CJK.search(line) and display_width(line) > (
            widest if line.split("#")[0].strip() else prose.LINE)]


def _tagged_code(text):
    """{tag: the code of the line it names} of a reference answer."""
    lines = text.splitlines()
    return {tag: [lines[n].split("#")[0] for n in numbers]
            for tag, numbers in tagged_lines(text).items()}


@pytest.mark.parametrize("key", SOLUTIONS)
def test_a_chinese_reference_answer_is_the_same_program_with_chinese_prose(key):
    english = answers.source(key)
    chinese = _in("zh", answers.text, key)
    assert chinese != english
    assert _code(chinese) == _code(english)  # compiles, and the code is the same
    assert _untranslated(english) == []
    assert _english_comments(chinese) == []
    assert _tagged_code(chinese) == _tagged_code(english)  # the lines the catalog names
    assert _wider_than_english(chinese, english) == []


@pytest.mark.parametrize("key", SOLUTIONS)
def test_a_chinese_reference_answer_passes_the_grader(key, tmp_path):
    if key.startswith("torch/"):
        pytest.importorskip("torch")
    path = tmp_path / f"my_{key.replace('/', '_')}.py"
    path.write_text(_in("zh", answers.text, key))
    report = grade_file(path)
    assert report.passed, [(c.label, c.status, c.note) for c in report.checks
                           if c.status not in ("pass", "n/a")]


def test_practice_solution_prints_the_answer_in_the_language_asked(capsys):
    assert main(["practice", "solution", "layernorm", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert out == _in("zh", answers.text, "layernorm") and CJK.search(out)
    assert main(["practice", "solution", "layernorm"]) == 0
    assert capsys.readouterr().out == answers.source("layernorm")


BACKWARD_EN = re.compile(r"\bbackward\b|\bgradients?\b|\bdL/d|\bdx\b|= \?")
BACKWARD_ZH = re.compile(r"反向|梯度")


def _task_prose(text, name):
    """The docstrings of a forward-only skeleton's module and exercise class, without the
    note that says the backward is not asked."""
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef)
               and n.name == EXERCISES[name].class_name)
    paragraphs = (ast.get_docstring(tree) + "\n\n" + ast.get_docstring(cls)).split("\n\n")
    return [p for p in paragraphs if "FORWARD_ONLY = True" not in p]


@pytest.mark.parametrize("name", [n for n, e in EXERCISES.items() if not e.function])
def test_a_forward_only_skeleton_says_nothing_of_the_backward(name):
    english = skeleton(name, "my.py", True)
    assert [p for p in _task_prose(english, name) if BACKWARD_EN.search(p)] == []
    chinese = _in("zh", skeleton, name, "my.py", True)
    assert [p for p in _task_prose(chinese, name) if BACKWARD_ZH.search(p)] == []
