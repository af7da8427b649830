"""The language machinery: how the language is chosen, the catalogs (complete, compiled, current
with their sources, true to the glossary) and display widths."""

import functools
import gettext
import re
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from normcore import i18n
from normcore.cli import main
from normcore.i18n import glossary
from normcore.i18n.width import clip, display_width, fill, pad, wrap
from norm_tiers import suite_settings


# --- choosing the language -------------------------------------------------------------------
@pytest.mark.parametrize("environ, expected", [
    ({}, "en"),
    ({"LANG": "zh_CN.UTF-8"}, "zh"),
    ({"LANG": "en_US.UTF-8"}, "en"),
    ({"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),  # LC_ALL comes first
    ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),
    ({"LC_MESSAGES": "zh_CN", "LANG": "en_US"}, "zh"),
    ({"NORMCORE_LANG": "en", "LANG": "zh_CN.UTF-8"}, "en"),  # normcore's own variable first
    ({"NORMCORE_LANG": "zh"}, "zh"),
    ({"NORMCORE_LANG": "zh-Hans"}, "zh"),
    # LANGUAGE, a list of preferences, comes before the locale, as in gettext
    ({"LANGUAGE": "zh_CN", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LANGUAGE": "zh_CN"}, "zh"),
    ({"LANGUAGE": "fr:zh_CN:en", "LC_ALL": "en_US.UTF-8"}, "zh"),  # the first one spoken
    ({"LANGUAGE": "en", "LC_ALL": "zh_CN.UTF-8"}, "en"),
    ({"LANGUAGE": "fr", "LANG": "zh_CN.UTF-8"}, "zh"),  # nothing spoken in the list: the locale
    ({"LANGUAGE": "zh_CN", "LANG": "C.UTF-8"}, "en"),  # gettext ignores it in the C locale
    ({"NORMCORE_LANG": "en", "LANGUAGE": "zh_CN"}, "en"),
    ({"LANG": "zh_TW.UTF-8"}, "zh"),
    ({"LANGUAGE": "zh_HK"}, "zh"),
])
def test_language_from_environment(environ, expected):
    assert i18n.language_from_environment(environ) == expected


@pytest.mark.parametrize("locale, traditional", [
    ("zh_TW.UTF-8", True), ("zh_HK", True), ("zh_MO", True), ("zh-Hant", True), ("zh-Hant-TW", True),
    ("zh_CN.UTF-8", False), ("zh-Hans", False), ("zh_SG", False), ("en_US", False),
])
def test_traditional_chinese_locales_are_recognised(locale, traditional):
    assert i18n.is_traditional(locale) is traditional


def test_traditional_chinese_gets_simplified_and_is_told_once(monkeypatch, capsys):
    monkeypatch.setattr(i18n, "_noted", False)
    monkeypatch.setenv("LANG", "zh_TW.UTF-8")
    assert i18n.language() == "zh" and i18n.language() == "zh"
    _ = i18n.translator("cli")
    _("an untranslated message")
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "zh_TW.UTF-8" in err[0] and "简体" in err[0]
    assert display_width(err[0]) <= 80


def test_simplified_chinese_is_not_told_anything(monkeypatch, capsys):
    monkeypatch.setattr(i18n, "_noted", False)
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert i18n.language() == "zh"
    assert capsys.readouterr().err == ""


# --- Chinese text put together: no space after 。 or around an inserted Chinese word ---------
def test_joined_sentences_take_a_space_in_english_only():
    assert i18n.joined("DyT is timed once.", "torch has no DyT.") == "DyT is timed once. torch has no DyT."
    assert i18n.joined("只计时一次。", "torch 没有 DyT。") == "只计时一次。torch 没有 DyT。"
    assert i18n.joined("-", "（待完成：backward）") == "-（待完成：backward）"
    assert i18n.joined("layer-norm", "(todo: backward)") == "layer-norm (todo: backward)"
    assert i18n.joined("残差", "", "连接") == "残差连接" and i18n.joined("", "x") == "x"


def test_a_chinese_word_filled_into_chinese_text_takes_no_space():
    _ = i18n.translator("explain")
    message = "{option} applies to the {kinds} step-through only, got {title}"
    with i18n.speaking("zh"):
        text = _(message).format(option="--position", kinds="残差连接", title="LayerNorm")
    assert text == "--position 只适用于残差连接的逐步推导，收到的是 LayerNorm"
    with i18n.speaking("en"):  # English keeps every space
        assert _(message).format(option="--p", kinds="dropout", title="x") == (
            "--p applies to the dropout step-through only, got x")
    filled = i18n.Message("{a} 和 {b} 的 {n:.2f} 与 {c!r}").format(a="残差", b="x", n=1, c="层")
    assert filled == "残差和 x 的 1.00 与 '层'"


def test_explain_in_chinese_puts_no_space_around_a_chinese_title():
    from normcore.derivations import step_through
    from normcore.derivations.render import header
    with i18n.speaking("zh"):
        first = header(step_through("residual", position="post"))[0]
        with pytest.raises(ValueError) as refused:
            step_through("layernorm", position="post")
    assert "残差连接逐步推导" in first and " 逐步推导" not in first
    assert "只适用于残差" in str(refused.value), str(refused.value)


@pytest.mark.parametrize("label, shown", [
    ("running_var of each worker", "running_var，每个 worker"),
    ("dgamma of each worker (its local share)", "dgamma，每个 worker（本地部分）"),
    ("forward (the shards concatenated)", "前向（分片拼接）"),
    ("eval: forward", "推理：前向"),
])
def test_check_labels_in_chinese_take_no_space_around_chinese_punctuation(label, shown):
    from normcore.practice.labels import show_label
    with i18n.speaking("zh"):
        assert show_label(label) == shown


def test_bench_legend_in_chinese_has_no_space_after_a_full_stop():
    torch = pytest.importorskip("torch")
    from normcore.perf.printing import machine_lines
    with i18n.speaking("zh"):
        lines = machine_lines(torch, False, 5, 1)
    text = "".join(line.strip() for line in lines)  # the lines as one text, unwrapped
    assert "。torch 没有 DyT" in text and not any("。 " in line for line in lines)


def test_unknown_language_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="expected one of en, zh"):
        i18n.language_from_environment({"NORMCORE_LANG": "fr"})
    with pytest.raises(ValueError, match="expected one of en, zh"):
        i18n.set_language("klingon")
    assert i18n.language() == "en"  # a refused choice changes nothing


def test_set_language_overrides_the_environment_until_reset(monkeypatch):
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.language() == "zh"
    assert i18n.set_language("en") == "en"
    assert i18n.set_language(None) == "zh"


def test_cli_lang_option_before_or_after_the_command(capsys):
    from normcore.cli import _language_in
    assert _language_in(["--lang", "zh", "tour"]) == "zh"
    assert _language_in(["practice", "new", "batchnorm", "--lang=zh"]) == "zh"
    assert _language_in(["tour"]) is None
    with pytest.raises(SystemExit) as exit_:
        main(["--lang", "fr", "tour"])
    assert exit_.value.code == 2 and "invalid choice: 'fr'" in capsys.readouterr().err


def test_bad_normcore_lang_variable_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setenv("NORMCORE_LANG", "fr")
    assert main(["tour"]) == 2
    err = capsys.readouterr().err
    assert "NORMCORE_LANG" in err and "expected one of en, zh" in err


def test_unknown_domain_is_refused():
    with pytest.raises(ValueError, match="expected one of cli, explain, practice, catalog"):
        i18n.translator("docs")


def test_english_is_the_message_itself_and_chinese_comes_from_the_catalog(monkeypatch):
    _ = i18n.translator("cli")
    i18n.set_language("en")
    assert _("an untranslated message") == "an untranslated message"
    catalog = gettext.translation("cli", i18n.LOCALE_DIR, languages=["zh"])
    translated = [(k, v) for k, v in catalog._catalog.items() if isinstance(k, str) and k]
    if not translated:
        pytest.skip("the cli catalog has no message yet")
    english, chinese = translated[0]
    i18n.set_language("zh")
    assert _(english) == chinese != english


# --- the catalogs ----------------------------------------------------------------------------
def test_catalogs_are_complete_compiled_and_current_with_their_sources():
    pytest.importorskip("babel", reason="the catalogs' check needs Babel (pip install normcore[dev])")
    from normcore.i18n.catalogs import problems
    found = problems()
    assert not found, "\n".join(found[:40])


def _translated_messages():
    pytest.importorskip("babel", reason="reading the .po files needs Babel")
    from normcore.i18n.catalogs import read_po
    for domain in i18n.DOMAINS:
        for message in read_po(domain):
            if message.id and message.string:
                ids = message.id if isinstance(message.id, tuple) else (message.id,)
                strings = message.string if isinstance(message.string, tuple) else (message.string,)
                yield domain, ids[0], strings[0]


def test_every_translation_uses_the_glossary_terms():
    wrong = [(d, en, zh, [t.zh for t in glossary.missing_terms(en, zh)])
             for d, en, zh in _translated_messages() if glossary.missing_terms(en, zh)]
    assert not wrong, "\n".join(f"{d}: {en!r} -> {zh!r} lacks {terms}" for d, en, zh, terms in wrong[:30])


def test_no_translation_adds_a_parenthesised_gloss():
    wrong = [(d, en, zh, glossary.added_glosses(en, zh))
             for d, en, zh in _translated_messages() if glossary.added_glosses(en, zh)]
    assert not wrong, "\n".join(f"{d}: {en!r} -> {zh!r} adds {added}" for d, en, zh, added in wrong[:30])


def test_no_translation_doubles_a_term_with_its_english_word():
    """"前向 forward", "均值 mean": the Chinese term and then the English word for it is a gloss
    without parentheses; a translation says one of them (the word where it is code)."""
    doubled = [(d, zh, t.en) for d, en, zh in _translated_messages() for t in glossary.terms()
               if t.zh != t.en and re.search(rf"{re.escape(t.zh)}\s*{re.escape(t.en)}(?![\w(])", zh)]
    assert not doubled, "\n".join(f"{d}: {zh!r} doubles {word}" for d, zh, word in doubled[:30])


def test_no_translation_uses_a_word_the_glossary_rejects():
    wrong = [(d, en, zh, glossary.avoided_terms(zh))
             for d, en, zh in _translated_messages() if glossary.avoided_terms(zh)]
    assert not wrong, "\n".join(f"{d}: {zh!r} says {', '.join(f'{w} (not {t.zh})' for w, t in found)}"
                                 for d, en, zh, found in wrong[:30])


ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "normcore" / "docs" / "pages"
# an aside only a translation has, by design: a link to material that exists in English only
CHINESE_ONLY_ASIDES = {"（英文）"}


@functools.cache
def _english_and_chinese_texts():
    """(where, English, Chinese) of every Chinese docs page with its English page ("" where
    there is none) and of every Markdown cell of the Chinese notebooks with its English cell."""
    import importlib.util
    found = []
    for page in sorted((PAGES / "zh").glob("*.md")):
        english = PAGES / page.name
        found.append((f"docs/pages/zh/{page.name}",
                      english.read_text(encoding="utf-8") if english.exists() else "",
                      page.read_text(encoding="utf-8")))
    spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    for topic in build.TOPICS:
        source, lang = build.source_and_language(topic)
        if lang == "zh":
            for i, (en, zh) in enumerate(zip(build.cells(source), build.cells(topic))):
                if zh.cell_type == "markdown":
                    found.append((f"{topic}, cell {i}", en.source, zh.source))
    return tuple(found)


def test_no_chinese_page_or_notebook_uses_a_word_the_glossary_rejects():
    wrong = [(where, w, t.zh) for where, _en, text in _english_and_chinese_texts()
             for w, t in glossary.avoided_terms(text)]
    assert not wrong, "\n".join(f"{where}: {w} (not {zh})" for where, w, zh in wrong[:30])


def test_no_chinese_page_or_notebook_adds_a_parenthesised_gloss():
    """As for the catalogs' messages; a Chinese page with no English one (practice.md) is no
    translation, and has nothing to add to."""
    wrong = [(where, added) for where, en, zh in _english_and_chinese_texts()
             if en and (added := [g for g in glossary.added_glosses(en, zh) if g not in CHINESE_ONLY_ASIDES])]
    assert not wrong, "\n".join(f"{where} adds {added}" for where, added in wrong[:30])


def test_no_chinese_page_or_notebook_doubles_a_term_with_its_english_word():
    doubled = [(where, t.en) for where, _en, zh in _english_and_chinese_texts() for t in glossary.terms()
               if t.zh != t.en and re.search(rf"{re.escape(t.zh)}\s*{re.escape(t.en)}(?![\w(])", zh)]
    assert not doubled, "\n".join(f"{where} doubles {word}" for where, word in doubled[:30])


def test_translations_keep_every_placeholder_and_number():
    import re
    fields = re.compile(r"\{[^{}]*\}|%\(?\w*\)?[sdfgr]")
    # a number: not part of an identifier (ASCII letters: a Chinese character beside it is fine)
    numbers = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![A-Za-z0-9_]|\.\d)")
    wrong = []
    for domain, en, zh in _translated_messages():
        if sorted(fields.findall(en)) != sorted(fields.findall(zh)):
            wrong.append((domain, en, zh, "placeholders"))
        elif sorted(numbers.findall(en)) != sorted(numbers.findall(zh)):
            wrong.append((domain, en, zh, "numbers"))
    assert not wrong, "\n".join(f"{d}: {w}: {en!r} -> {zh!r}" for d, en, zh, w in wrong[:30])


def test_glossary_terms_are_unique_and_complete():
    terms = glossary.terms()
    assert len({t.en.lower() for t in terms}) == len(terms) and all(t.zh for t in terms)
    assert glossary.missing_terms("the running mean of batch normalization", "批量归一化的移动均值") == []
    assert [t.en for t in glossary.missing_terms("standardises the gradient", "标准化")] == ["gradient"]
    assert glossary.missing_terms("mean_D(dx) in `mean`", "") == []  # code is not a word


@pytest.mark.parametrize("english", [
    "``self.running_mean`` and ``mean``",   # double-backquoted code, as in docstrings
    "fill in ``x.mean(axis=0)`` and\n``backward`` here",
    "by means of a loop",                   # not the plural of the noun
    "what p means",                         # the verb
    "the meaning of eps",
    "it reads backwards",                   # in reverse, not the backward pass
    "meantime, a forwarder",                # inside another word
])
def test_a_term_in_code_or_in_another_word_asks_nothing(english):
    assert glossary.missing_terms(english, "") == []


@pytest.mark.parametrize("english, terms", [
    ("the mean of ``x``", ["mean"]),
    ("call ``layer.forward`` then the backward", ["backward"]),
    ("two gradients", ["gradient"]),
    ("standardised, then masked", ["standardise", "mask"]),
    ("the batch sizes", ["batch size"]),
])
def test_a_term_in_prose_asks_for_its_chinese(english, terms):
    assert [t.en for t in glossary.missing_terms(english, "")] == terms


# the glossary's terms that hold another term as a word: internal covariate shift (shift),
# feed-forward (forward), root mean square (mean square, mean), batch size (batch), ...
LONGER_TERMS = [t.en for t in glossary.terms()
                if any(u is not t and u.pattern.search(t.en) for u in glossary.terms())]


@pytest.mark.parametrize("en", LONGER_TERMS)
def test_the_longest_term_is_matched_first_and_takes_its_words(en):
    """A term inside a longer one is the longer one's: "internal covariate shift" asks for
    内部协变量偏移 alone, not also for 平移 (shift), whatever the glossary's order."""
    assert {"internal covariate shift", "feed-forward", "root mean square", "batch size"} <= set(LONGER_TERMS)
    zh = next(t.zh for t in glossary.terms() if t.en == en)
    assert [t.en for t in glossary.missing_terms(f"the {en} here", "")] == [en]
    assert glossary.missing_terms(f"the {en} here", f"这里的{zh}") == []


def test_a_shorter_term_outside_the_longer_one_still_asks_for_its_chinese():
    english = "internal covariate shift is not a shift of the input"
    assert glossary.missing_terms(english, "内部协变量偏移并不是输入的平移") == []
    assert [t.en for t in glossary.missing_terms(english, "内部协变量偏移并不是输入的变化")] == ["shift"]


@pytest.mark.parametrize("en, words", [
    ("gradient", ("gradient", "gradients")),
    ("batch", ("batch", "batches")),                 # -ch, -sh, -s, -x: -es
    ("bias", ("bias", "biases")),
    ("probability", ("probability", "probabilities")),  # a consonant and y: -ies
    ("key", ("key", "keys")),                        # a vowel and y: -s
    ("batch size", ("batch size", "batch sizes")),  # a phrase: its last word
])
def test_a_term_matches_its_singular_and_its_plural(en, words):
    assert glossary.Term(en, "").words == words
    assert all(glossary.Term(en, "").pattern.fullmatch(w) for w in words)


def test_the_forms_a_term_lists_replace_the_plural():
    """"means" is not the plural of the noun mean (by means of, what p means): the glossary
    lists mean's forms, and a listed form list is all the term matches."""
    mean = glossary.Term("mean", "均值", forms=["mean"])
    assert mean.words == ("mean",) and not mean.pattern.search("what p means")


@pytest.mark.parametrize("english, chinese", [
    # the padding the old glossary check drove translators to
    ("what p means, and when the scaling happens", "p 的含义（而不是均值之类），以及缩放在什么时候做"),
    ("one feed-forward sub-layer F", "一个前馈网络子层 F（它也有自己的前向）"),
    ("the feed-forward: F(h) = relu(h)", "前馈网络（前向为 F）：F(h) = relu(h)"),
    ("BatchNorm1d on K workers", "在 K 个 worker 上做 BatchNorm1d（eps 与动量 momentum 同它）"),
    ("the class has no backward method", "类没有 backward 方法（没有反向）"),
    ("of MultiheadAttention.backward", "MultiheadAttention.backward（反向）给出的"),
    ("of MultiheadAttention.backward", "MultiheadAttention.backward (反向) 给出的"),
    ("updated with ``momentum``", "按 ``momentum``（动量）更新"),
    ("(N, C) input", "(N, C) 输入（批次大小）"),
    ("the backward", "反向(backward)"),  # half-width after a Chinese word is an aside too
])
def test_an_added_gloss_is_found(english, chinese):
    assert glossary.added_glosses(english, chinese)


@pytest.mark.parametrize("english, chinese", [
    ("shape (N, C) and (C,)", "形状 (N, C) 和 (C,)"),
    ("the median (not the mean)", "中位数（不是均值）"),  # full-width for half-width
    ("x.mean(axis=0) over (N, C)", "对 (N, C) 取 x.mean(axis=0)"),  # a call is no aside
    ("sqrt((n - 1) / n) (about 0.7)", "sqrt((n - 1) / n)（约 0.7）"),
    ("``f(x)`` (the branch)", "``f(x)``（分支）"),
    ("a gloss (dropped) is fine", "省掉括号也可以"),
])
def test_a_translated_aside_is_no_added_gloss(english, chinese):
    assert glossary.added_glosses(english, chinese) == []


def test_a_rejected_word_is_found_outside_code():
    avoided = {word for t in glossary.terms() for word in t.avoid}
    assert {"评估模式", "就地", "笔记本"} <= avoided
    assert [(w, t.zh) for w, t in glossary.avoided_terms("评估模式下")] == [("评估模式", "推理模式")]
    assert glossary.avoided_terms("推理模式下，``评估模式``") == []
    assert [w for w, t in glossary.avoided_terms("新批次的权重")] == ["批次"]
    assert glossary.avoided_terms("批次大小为 2 的批量归一化，大批量和小批量") == []
    assert [w for w, t in glossary.avoided_terms("在批量上")] == ["批量"]
    assert [w for w, t in glossary.avoided_terms("批均值的误差")] == ["批"]  # batch 均值
    assert glossary.avoided_terms("分批计算，成批进行，批(量)归一化") == []


# --- display widths ----------------------------------------------------------------------------
def test_display_width_counts_a_chinese_character_as_two_columns():
    assert display_width("批量归一化 BN") == 13
    assert display_width("（，）") == 6  # fullwidth punctuation
    assert pad("层归一化", 10) == "层归一化  " and pad("层", 4, ">") == "  层"
    assert pad("ab", 6, "^") == "  ab  " and pad("toolong", 3) == "toolong"
    assert clip("层归一化", 5) == "层归"
    with pytest.raises(ValueError, match="align must be"):
        pad("x", 3, "=")


@pytest.mark.parametrize("text, width, clipped", [
    ("LayerNorm", 5, "Layer"),        # exactly 5 columns
    ("LayerNorm", 9, "LayerNorm"),    # no wider than 9: unchanged
    ("LayerNorm", 20, "LayerNorm"),
    ("层归一化", 4, "层归"),            # the cut between two wide characters: exactly 4
    ("层归一化", 5, "层归"),            # the cut inside 一: 一 left out, 4 columns
    ("BN 层归一化", 6, "BN 层"),        # inside 归: 5 columns
    ("BN 层归一化", 7, "BN 层归"),
    ("层", 1, ""),
    ("x", 0, ""),
])
def test_clip_keeps_exactly_width_columns_and_never_halves_a_wide_character(text, width, clipped):
    assert clip(text, width) == clipped


@suite_settings(max_examples=30)
@given(text=st.lists(st.sampled_from(["归一化", "层", "，", "（", "LayerNorm", "x_hat", " ", "1e-10"]),
                     max_size=12).map("".join), width=st.integers(0, 30))
def test_clip_is_width_columns_of_the_text_or_one_less_before_a_wide_character(text, width):
    clipped = clip(text, width)
    assert text.startswith(clipped)
    if display_width(text) <= width:
        assert clipped == text
    elif display_width(clipped) != width:  # the cut fell inside the next character
        assert display_width(clipped) == width - 1 and display_width(text[len(clipped)]) == 2


def test_wrap_fills_each_line_to_the_full_width():
    assert wrap("ab cd ef gh", 5) == ["ab cd", "ef gh"]
    assert wrap("ab cd ef gh", 7, indent="  ") == ["  ab cd", "  ef gh"]
    assert wrap("训练 推理 训练 推理", 9) == ["训练 推理", "训练 推理"]
    assert wrap("每个文件在自己的进程里运行", 10) == ["每个文件在", "自己的进程", "里运行"]


@suite_settings(max_examples=30)
@given(words=st.lists(st.sampled_from(["a", "bb", "ccc", "dddd", "层", "归一化"]), min_size=1, max_size=20),
       width=st.integers(6, 30))
def test_no_wrapped_line_could_have_taken_the_next_word(words, width):
    """Greedy filling: each line ends where the next line's first word would not fit."""
    lines = wrap(" ".join(words), width)
    assert all(display_width(line) <= width for line in lines)
    for line, after in zip(lines, lines[1:]):
        assert display_width(f"{line} {after.split()[0]}") > width, (width, lines)


@pytest.mark.parametrize("text", ["ab", "abc", "层", "层归"])
def test_pad_centred_puts_the_odd_space_on_the_right(text):
    """As format's '^': the text's own width decides whether the room left is odd."""
    for width in range(display_width(text), display_width(text) + 6):
        room = width - display_width(text)
        assert pad(text, width, "^") == " " * (room // 2) + text + " " * (room - room // 2)
    assert pad("ab", 5, "^") == " ab  " == format("ab", "^5")
    assert pad("层", 5, "^") == " 层  "


def test_wrap_breaks_chinese_between_characters_never_before_closing_punctuation():
    text = "归一化的目标是固定每层输入的分布（如均值 0、方差 1），稳定训练过程。" * 3
    lines = wrap(text, 24, indent="  ")
    assert all(display_width(line) <= 24 for line in lines) and len(lines) > 3
    assert all(line.lstrip()[:1] not in "，。、）" for line in lines)
    assert "".join(line.strip().replace(" ", "") for line in lines) == text.replace(" ", "")


def test_wrap_of_english_matches_textwrap():
    text = ("Each layer below runs in float64 with random parameters (never the ones and zeros "
            "they start at) and a random upstream gradient dy.")
    for width in (20, 40, 79):
        assert wrap(text, width, "  ", "    ") == textwrap.wrap(
            text, width, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False)
    assert fill("", 10) == ""


_mixed = st.lists(st.sampled_from(["归一化", "层", "，", "。", "（", "）", "LayerNorm", "x_hat", " ",
                                   "gradient", "1e-10", "、", "averyveryverylongidentifier"]),
                  max_size=40).map("".join)


@suite_settings(max_examples=200)
@given(text=_mixed, width=st.integers(8, 80))
def test_wrapped_lines_fit_and_keep_every_character(text, width):
    lines = wrap(text, width, indent="  ")
    assert all(display_width(line) <= width for line in lines)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize("width", [1, 2, 3])
def test_wrap_to_a_width_narrower_than_a_phrase_still_ends(width):
    # a wide character on a line of one column cannot fit: it takes a line of its own
    lines = wrap("层归一化 LayerNorm", width)
    assert "".join(lines).replace(" ", "") == "层归一化LayerNorm"
    assert all(display_width(line) <= max(width, 2) for line in lines)


# --- wrapping a label: phrases, numbers, tuples and formulas stay whole ----------------------
def test_wrap_breaks_a_label_at_its_space_not_inside_its_chinese_phrase():
    assert wrap("running_var 推理前向后", 20) == ["running_var", "推理前向后"]
    assert wrap("训练 batch 为 2 (2, 4)", 12) == ["训练 batch", "为 2 (2, 4)"]


def test_wrap_leaves_no_character_of_a_long_phrase_alone_on_a_line():
    text = "每个文件在自己的进程里运行"  # 13 characters, 26 columns: longer than a phrase
    for width in range(6, 26):
        lines = wrap(text, width)
        assert all(len(line) >= 2 for line in lines), (width, lines)


def test_wrap_keeps_a_short_tuple_and_formula_on_one_line():
    text = "仅用于 attention：注意力头数，必须整除形状 (T, D) 或 (B, T, D) 中的 D；丢弃概率 0 <= p < 1"
    for width in range(24, 81):
        lines = wrap(text, width, indent="  ")
        assert any("(T, D)" in line for line in lines) and any("(B, T, D)" in line for line in lines)
        assert any("0 <= p < 1" in line for line in lines), (width, lines)
    long = "dx = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat))"
    assert all(display_width(line) <= 40 for line in wrap(long, 40))  # too long: breaks at spaces


_PHRASES = ["推理前向后", "训练", "移动统计量", "常数通道", "小方差", "梯度累加", "前向", "反向后"]
_WORDS = ["running_var", "momentum=None", "float32", "x_hat", "3 维", "eps=1e-5", "(2, 4)",
          "(N, C, L)", "0 <= p < 1", "y = x + f(x)", "1e-10"]
_labels = st.lists(st.sampled_from(_PHRASES + _WORDS), min_size=1, max_size=6)


@suite_settings(max_examples=200)
@given(parts=_labels, width=st.integers(14, 40))  # the longest part fits a line
def test_wrapped_labels_break_only_between_their_parts(parts, width):
    """A label made of Chinese phrases, identifiers, numbers, tuples and formulas breaks only
    at the spaces between them: each part whole on one line, no line of one character."""
    lines = wrap(" ".join(parts), width)
    assert all(display_width(line) <= width for line in lines)
    assert " ".join(lines) == " ".join(parts)
    for part in parts:
        assert any(part in line for line in lines), (part, lines)
    assert all(len(line) > 1 for line in lines), lines


def test_a_short_quoted_chinese_phrase_stays_on_one_line():
    """“未写” is one phrase: the narrow opening quote glued to its character does not hide it."""
    from normcore.i18n.width import wrap

    text = "评分器检查训练时的数值，移动统计量和推理模式的检查记为“未写”。想练完整的层：看下面。"
    for width in range(20, 60):
        lines = wrap(text, width)
        assert not any(line.endswith("“未") or line.startswith("写”") for line in lines), lines
