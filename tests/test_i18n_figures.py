"""A figure's words in the reader's language (normcore.i18n.figures): Chinese, in a Chinese font,
when matplotlib has one; English otherwise; never an empty box nor a missing-glyph warning. And
the Chinese notebooks say so once, near their first figure."""

import importlib.util
import io
import re
import warnings
from pathlib import Path

import pytest

pytest.importorskip("matplotlib", reason="figures need matplotlib")
import matplotlib  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from normcore import i18n  # noqa: E402
from normcore.i18n import figures  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CJK = re.compile(r"[\u4e00-\u9fff]")
tr = i18n.translator("notebooks")


def test_a_chinese_font_among_the_installed_gives_chinese_words_in_that_font():
    installed = {"DejaVu Sans", "WenQuanYi Zen Hei", "Noto Sans CJK SC", "cmr10"}
    with i18n.speaking("zh"):
        font, say = figures.figure_language(tr, installed)
        assert font == "Noto Sans CJK SC"  # the first by preference, not by the list's order
        assert say("training step") == "训练步数"
        with figures.figure_words(tr, installed) as say:
            assert matplotlib.rcParams["font.family"] == ["Noto Sans CJK SC", "DejaVu Sans"]
            assert say("running mean") == "移动均值"
    assert matplotlib.rcParams["font.family"] != ["Noto Sans CJK SC", "DejaVu Sans"]  # restored


@pytest.mark.parametrize("installed", [set(), {"DejaVu Sans", "STIXGeneral", "cmr10"}])
def test_without_a_chinese_font_the_words_stay_english_and_the_font_as_it_was(installed):
    before = list(matplotlib.rcParams["font.family"])
    with i18n.speaking("zh"):
        assert figures.figure_language(tr, installed)[0] is None
        with figures.figure_words(tr, installed) as say:
            assert say("training step") == "training step"
            assert matplotlib.rcParams["font.family"] == before


def test_english_words_whatever_fonts_there_are():
    with i18n.speaking("en"), figures.figure_words(tr, {"Noto Sans CJK SC"}) as say:
        assert say("training step") == "training step"
        assert figures.figure_language(tr, {"Noto Sans CJK SC"})[0] is None


def _missing_glyphs(words):
    """The missing-glyph warnings of a figure that shows every one of ``words``, drawn inside
    ``figure_words`` in Chinese, on this machine's fonts."""
    with i18n.speaking("zh"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with figures.figure_words(tr) as say:
            fig = Figure(figsize=(4, 4))
            ax = fig.subplots()
            for i, word in enumerate(words):
                ax.text(0, i, say(word))
            ax.set_title(say(words[0]))
            fig.savefig(io.BytesIO(), format="png")
    return [str(w.message) for w in caught if "missing from font" in str(w.message)]


def _figure_words():
    """The words the notebooks' figures draw: their say() calls, and the N_() labels (a
    figure's tick labels are such names)."""
    pytest.importorskip("babel", reason="reading the notebooks' messages needs Babel")
    from normcore.i18n.catalogs import notebook_messages
    return sorted({message for message, _ in notebook_messages(keywords={"say": None, "N_": None})})


def test_the_notebooks_figure_words_in_chinese_draw_no_empty_box_on_this_machine():
    words = _figure_words()
    assert len(words) >= 15 and "training step" in words and "unbiased variance" in words
    assert _missing_glyphs(words) == []
    with i18n.speaking("zh"):
        assert bool(figures.chinese_font()) == any(CJK.search(figures.figure_language(tr)[1](w))
                                                   for w in words)


def test_the_empty_box_check_can_fail(monkeypatch):
    monkeypatch.setattr(figures, "chinese_font", lambda installed=None: "DejaVu Sans")  # no Chinese
    assert _missing_glyphs(["training step", "running mean"])


def _build():
    spec = importlib.util.spec_from_file_location("notebook_build_figures", ROOT / "notebooks" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build


def _draws(cell):
    """Whether a cell shows a figure: an image in Markdown, a plot or a graph in code."""
    if cell.cell_type == "markdown":
        return "![" in cell.source
    return "plt." in cell.source or ".graph()" in cell.source


@pytest.mark.parametrize("topic", ["batchnorm_zh", "layernorm_zh", "rmsnorm_zh", "pre_post_norm_zh",
                                   "interview_practice_zh"])
def test_a_chinese_notebook_says_once_near_its_first_figure_why_its_words_may_be_english(topic):
    build = _build()
    cells = build.cells(topic)
    note = build.FONT_NOTES["zh"]
    said = [i for i, c in enumerate(cells) if c.cell_type == "markdown" and note in c.source]
    first = next(i for i, c in enumerate(cells) if _draws(c))
    assert len(said) == 1 and first - 1 <= said[0] <= first, (said, first)
    assert "fonts-noto-cjk" in note and CJK.search(note)
    assert not any(build.FONT_NOTE in c.source for c in cells)
