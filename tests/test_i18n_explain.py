"""``normcore explain`` in Chinese: every step-through speaks Chinese within 80 display columns,
with exactly the numbers, checks and verdicts it has in English; formulas stay formulas."""

import contextlib
import io
import re
import warnings
from collections import Counter

import pytest

from normcore.cli import main
from normcore.derivations import KINDS, step_through
from normcore.i18n import figures
from normcore.derivations import render
from normcore.derivations import steps as steps_module
from normcore.derivations.tape import Phrase, english
from normcore.i18n import N_, set_language
from normcore.i18n.width import display_width
from test_derivations import TEX_MACROS, _tex_braces_balance

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def english_prose(text):
    """Runs of three or more English words on a line, once formulas, code, numbers and names
    are set aside: a token with a digit, an underscore, a bracket, an operator or a backslash is
    not a word, nor is a variable of one or two letters (x, dy) or a Chinese character; any of
    them breaks a run."""
    runs = []
    for line in text.splitlines():
        if line.lstrip().startswith("TeX"):  # a LaTeX formula under its label
            continue
        run = []
        for token in CJK.sub(" | ", line).split():
            word = token.strip(",.;:!?")
            if word.isascii() and word.isalpha() and len(word) > 2:
                run.append(word)
                continue
            if len(run) >= 3:
                runs.append(" ".join(run))
            run = []
        if len(run) >= 3:
            runs.append(" ".join(run))
    return runs


def numbers(text):
    return Counter(NUMBER.findall(text))


def _in(lang, make):
    set_language(lang)
    try:
        return make()
    finally:
        set_language(None)


def _run(argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        import sys
        saved, sys.stdin = sys.stdin, io.StringIO(stdin)
        try:
            status = main(argv)
        finally:
            sys.stdin = saved
    return status, out.getvalue(), err.getvalue()


def _fits(text):
    return max(display_width(line) for line in text.splitlines()) <= 80


def test_the_prose_check_finds_english_and_passes_formulas():
    assert english_prose("    dL/dmean = share from mean + share from var") == ["share from mean", "share from var"]
    assert english_prose("dx = rstd * (dx_hat - mean_D(dx_hat)), dx_hat = dy * gamma") == []
    assert english_prose("把逐节点算出的梯度与 LayerNorm.backward 比较（紧凑公式）") == []
    assert english_prose("[11] y: 平移, y = scaled + beta") == []


# --- every kind, once in each language ----------------------------------------------------------
# made in one language and shown in the other: the kinds whose sentences are all Phrases
SHOWN_LATER = list(KINDS)
SAID_AS_IS = {"tanh", "erf"}  # step names that read the same in Chinese


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_speaks_chinese_with_the_english_numbers_and_verdicts(kind):
    st, st_zh = step_through(kind, seed=1), _in("zh", lambda: step_through(kind, seed=1))
    en, zh = st.text(), _in("zh", st_zh.text)
    assert english_prose(en), "the English text has prose the check should find"
    assert english_prose(zh) == [], english_prose(zh)[:5]
    assert CJK.search(zh) and not CJK.search(en)
    assert max(display_width(line) for line in zh.splitlines()) <= 80
    assert numbers(zh) == numbers(en)  # the language changes no number
    # the same checks with the same verdicts, in the summary's one line per check
    set_language("zh")
    verdicts = {render._(word): word for word in render.VERDICTS}
    against = {render._(word): word for word in render.AGAINST}
    summary = render.render_summary(st_zh)
    steps = {node.step: render._(node.step) for node in st.tape}
    set_language(None)
    assert all(said != step or step in SAID_AS_IS for step, said in steps.items()), steps
    rows = [re.fullmatch(r"  (\S+) +对比 (\S+) +(\S+)", line) for line in summary.splitlines()]
    said = [(m[1], against[m[2]], verdicts[m[3]]) for m in rows if m]
    assert said == [(c.node, c.against, c.verdict) for c in st.checks] == [
        (c.node, c.against, c.verdict) for c in st_zh.checks]
    assert english_prose(summary) == [] and _fits(summary)
    assert summary.splitlines()[-1] == f"全部 {len(st.checks)} 项检查都精确或接近。"


@pytest.mark.parametrize("kind", SHOWN_LATER)
def test_a_step_through_made_in_english_speaks_chinese_when_shown(kind):
    st = step_through(kind)
    zh = _in("zh", st.text)
    assert english_prose(zh) == [] and numbers(zh) == numbers(st.text())


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kinds_formulas_and_rules_are_the_english_ones(kind):
    st = step_through(kind)
    en = " ".join(st.text(latex=True).split())
    zh = " ".join(_in("zh", lambda: st.text(latex=True)).split())
    for node in st.tape:
        if not node.is_leaf:
            assert node.formula in zh and node.formula_tex in zh
        for edge in node.edges:
            assert edge.local_tex in zh
            # a rule with words in it (a Phrase) keeps its formula; a plain rule is untouched
            formula = edge.rule.fields["d"] if isinstance(edge.rule, Phrase) else edge.rule
            assert formula in zh and english(edge.rule) in en


def test_a_wrong_rule_is_reported_as_differing_in_chinese(monkeypatch):
    original = steps_module.Tape.rsqrt

    def wrong_rsqrt(self, *args, **kwargs):
        node = original(self, *args, **kwargs)
        vjp = node.edges[0].vjp
        node.edges[0].vjp = lambda g, out, v: -vjp(g, out, v)
        return node

    monkeypatch.setattr(steps_module.Tape, "rsqrt", wrong_rsqrt)
    st = step_through("layernorm", shape=(3, 4), seed=0)
    zh = _in("zh", st.text)
    bad = sum(c.verdict == "DIFFERS" for c in st.checks)
    assert f"{len(st.checks)} 项检查中有 {bad} 项不符：x (紧凑公式)" in " ".join(zh.split())
    assert re.search(r"^x +\(3, 4\) +不符 ", zh, flags=re.M)


def test_phrases_say_the_language_in_use_and_keep_their_fields():
    phrase = Phrase(N_("{d} = 1 at the argmax, 0 elsewhere"), d="d m/d s_i")
    assert str(phrase) == "d m/d s_i = 1 at the argmax, 0 elsewhere" == phrase.english
    assert _in("zh", lambda: f"{phrase}") == "在 argmax 处 d m/d s_i = 1，其余为 0"
    assert _in("zh", lambda: phrase.english) == phrase.english
    assert english("plain") == "plain"


def test_step_through_errors_are_in_chinese():
    set_language("zh")
    with pytest.raises(ValueError, match=r"BatchNorm 的逐步推导要求输入的维数为 2 或 3 或 4，收到的形状是 \(3,\)"):
        step_through("batchnorm", shape=(3,))
    with pytest.raises(ValueError, match="只适用于 softmax"):
        step_through("layernorm", causal=True)


# --- the command: the issue's `normcore --lang zh explain layernorm` and its modes ---------------
def test_explain_layernorm_in_chinese():
    status, zh, _ = _run(["--lang", "zh", "explain", "layernorm"])
    status_en, en, _ = _run(["explain", "layernorm"])
    assert status == status_en == 0
    lines = zh.splitlines()
    assert lines[0].startswith("LayerNorm 逐步推导：x 的形状为 (3, 4)")
    assert "== 前向：12 个节点" in zh and "== 反向：从 dL/dy" in zh and "== 检查" in zh
    assert "传给 xc：" in zh and "局部导数  d x_hat/d xc = rstd" in zh
    assert "dL/dx = mean 传回的份额 + xc 传回的份额" in " ".join(zh.split())
    assert lines[-1] == "全部 16 项检查都精确或接近。"
    assert _fits(zh) and english_prose(zh) == [] and numbers(zh) == numbers(en)
    assert _run(["explain", "layernorm", "--lang", "zh"])[1] == zh  # the option after the command


def test_explain_summary_in_chinese():
    status, zh, _ = _run(["--lang", "zh", "explain", "batchnorm", "--summary"])
    assert status == 0 and _fits(zh) and english_prose(zh) == []
    assert "[ 8] rstd: 平方根倒数, rstd = 1 / sqrt(var_eps)" in zh
    assert not re.search(r"\d\.\d{4}", zh)  # no values


def test_explain_step_in_chinese_paces_by_enter():
    status, zh, _ = _run(["--lang", "zh", "explain", "rmsnorm", "--step", "--shape", "2x4"], stdin="\n\nb\nq\n")
    assert status == 0 and _fits(zh) and english_prose(zh) == []
    prompts = re.findall(r"\[节点 (\d+)/(\d+)\] Enter：下一个，b：上一个，q：退出", zh)
    assert [int(i) for i, _ in prompts] == [1, 2, 3, 2] and {n for _, n in prompts} == {"8"}
    assert "== 检查" not in zh  # q quits before the checks


def test_explain_step_in_chinese_runs_to_the_checks_when_stdin_closes():
    status, zh, _ = _run(["--lang", "zh", "explain", "dropout", "--step", "--shape", "2x4"], stdin="\n")
    assert status == 0 and _fits(zh) and english_prose(zh) == []
    assert zh.count("[节点 ") == 2 and "== 检查" in zh and zh.splitlines()[-1].startswith("全部 ")


@pytest.mark.parametrize("kind", list(KINDS))
def test_explain_markdown_in_chinese_balances_its_math(kind):
    status, md, _ = _run(["--lang", "zh", "explain", kind, "--format", "md"])
    assert status == 0 and md.startswith("# ") and md.splitlines()[0].endswith("：逐步推导反向传播")
    assert "| # | 步骤 | 节点 | 前向 | 局部导数 | 反向规则 |" in md and "## 计算带" in md
    st = step_through(kind)
    for node in st.tape:
        assert f"### [{node.index}] `{node.name}`" in md
    assert md.count("$$") % 2 == 0 and md.count("$$") >= 2 * len(st.tape.nodes)
    for line in md.replace("$$", "").splitlines():
        assert line.count("$") % 2 == 0, line
    for block in re.findall(r"\$\$(.*?)\$\$", md, flags=re.S):
        assert block.strip() and "\n" not in block and _tex_braces_balance(block)
    en = _run(["explain", kind, "--format", "md"])[1]
    assert numbers(md) == numbers(en)


@pytest.mark.parametrize("kind", ["layernorm", "cross_entropy", "softmax"])
def test_explain_latex_in_chinese_is_a_balanced_fragment_that_says_it_needs_xecjk(kind):
    status, tex, _ = _run(["--lang", "zh", "explain", kind, "--format", "tex"])
    assert status == 0 and _tex_braces_balance(tex)
    assert tex.splitlines()[1].startswith("% ") and "xeCJK" in tex.splitlines()[1]
    opened = re.findall(r"\\begin\{([^}]*)\}", tex)
    st = step_through(kind)
    assert opened == re.findall(r"\\end\{([^}]*)\}", tex) == ["enumerate"] + ["align*"] * len(st.tape.nodes)
    assert set(re.findall(r"\\([A-Za-z]+)", tex)) <= TEX_MACROS
    for node in st.tape:
        for edge in node.edges:
            assert edge.local_tex in tex
    assert "xeCJK" not in _run(["explain", kind, "--format", "tex"])[1]  # English needs no CJK


# --- the graph: Chinese words only with a font that has them, never empty boxes ----------------
def test_graph_words_are_chinese_with_a_chinese_font(monkeypatch):
    monkeypatch.setattr(figures, "chinese_font", lambda installed=None: "Some CJK Font")
    g = _in("zh", lambda: step_through("layernorm").graph())
    assert g.font == "Some CJK Font" and g.note == ""
    assert g.labels["x"].split("\n")[1] == "输入" and g.labels["gamma"].split("\n")[1] == "参数"
    assert list(g.routes)[0] == "直达：x -> xc -> x_hat"
    assert "经由均值：x -> mean -> xc" in g.routes and g.legend.startswith("从 x 到 x_hat 的各条路径")
    assert g.others == "参数与 x_hat 之后的步骤"
    assert g.title.startswith("LayerNorm：计算带的计算图")


def test_graph_falls_back_to_english_words_without_a_chinese_font(monkeypatch):
    monkeypatch.setattr(figures, "chinese_font", lambda installed=None: None)
    en = step_through("dropout").graph()
    zh = _in("zh", lambda: step_through("dropout").graph())  # its what is a Phrase, said in Chinese
    assert (zh.title, zh.labels, list(zh.routes), zh.legend, zh.others) == (
        en.title, en.labels, list(en.routes), en.legend, en.others)
    assert zh.font == "" and "fonts-noto-cjk" in zh.note and CJK.search(zh.note) and en.note == ""


def _missing_glyphs(graph, path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        graph.save(path)
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def test_the_chinese_graph_draws_no_empty_boxes(tmp_path):
    g = _in("zh", lambda: step_through("groupnorm", shape=(2, 4, 3)).graph())
    assert _missing_glyphs(g, tmp_path / "g.svg") == []
    assert bool(g.font) == bool(CJK.search(g.title))  # Chinese words only with a Chinese font


def test_the_empty_box_check_can_fail(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "chinese_font", lambda installed=None: "DejaVu Sans")  # no Chinese glyphs
    g = _in("zh", lambda: step_through("layernorm").graph())
    assert _missing_glyphs(g, tmp_path / "g.svg")


def test_explain_graph_in_chinese_says_why_its_words_are_english(tmp_path, monkeypatch):
    monkeypatch.setattr(figures, "chinese_font", lambda installed=None: None)
    status, out, _ = _run(["--lang", "zh", "explain", "layernorm", "--graph", str(tmp_path / "g.svg")])
    note = out.split("\n", 1)[1]  # after "wrote PATH" (a temporary path may be long)
    assert status == 0 and "fonts-noto-cjk" in note and _fits(note)


@pytest.mark.parametrize("argv", [["batchnorm", "--shape", "4"], ["layernorm", "--causal"],
                                  ["groupnorm", "--shape", "2x1"]])
def test_explain_errors_in_chinese_fit_80_columns(argv):
    status, out, err = _run(["--lang", "zh", "explain", *argv])
    assert status == 2 and out == "" and CJK.search(err) and _fits(err)
    assert english_prose(err) == []


def test_explain_graph_lists_its_routes_in_chinese_whatever_the_pictures_words(tmp_path, capsys):
    """Without a Chinese font the picture keeps English words, but the routes explain prints
    are in the language in use: the same routes, with the same edges, as in English."""
    for kind in ("layernorm", "attention"):
        path = tmp_path / f"{kind}.svg"
        assert main(["explain", kind, "--graph", str(path)]) == 0
        english = capsys.readouterr().out
        assert main(["--lang", "zh", "explain", kind, "--graph", str(path)]) == 0
        chinese = capsys.readouterr().out
        hops = lambda text: re.findall(r"\w+ -> \w+", " ".join(text.split()))  # noqa: E731
        assert hops(english) and hops(chinese) == hops(english)  # the same routes, edge by edge
        assert not any(word in chinese for word in ("direct:", "through the", "through q"))
        assert ("直达：" if kind == "layernorm" else "经由 q：") in chinese
