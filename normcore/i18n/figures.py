"""A figure's words in the language in use, never drawn as empty boxes.

matplotlib draws a character its font lacks as an empty box (and warns "Glyph ... missing from
font(s)"), and its own font, DejaVu Sans, has no Chinese. So a figure speaks Chinese only when
matplotlib finds a font that has Chinese glyphs (``chinese_font``: the common ones, by name), and
is drawn in that font; without one its words stay English. A notebook cell draws its figure
inside ``figure_words``, with the notebook's translator:

    tr = translator("notebooks")
    with figure_words(tr) as say:
        fig, ax = plt.subplots()
        ax.set_xlabel(say("training step"))   # 训练步数 with a Chinese font, else training step
        plt.show()

A font installed after matplotlib made its font cache is not seen until the cache is deleted
(``fontlist-*.json`` in ``matplotlib.get_cachedir()``) and Python restarted.
"""

from contextlib import contextmanager

from . import language

# fonts with Chinese glyphs, in order of preference (families as matplotlib names them): Linux
# packages first (Debian's fonts-noto-cjk, fonts-wqy-*), then those of Windows and macOS
CHINESE_FONTS = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Source Han Sans CN",
                 "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "AR PL UMing CN",
                 "Microsoft YaHei", "SimHei", "PingFang SC", "Heiti SC", "Arial Unicode MS")
FALLBACK = "DejaVu Sans"  # matplotlib's own font: Latin letters, digits and mathematical signs


def installed_fonts():
    """The font families matplotlib can use on this machine."""
    from matplotlib import font_manager
    return {f.name for f in font_manager.fontManager.ttflist}


def chinese_font(installed=None):
    """The first of ``CHINESE_FONTS`` among ``installed`` (default: ``installed_fonts()``), or None."""
    installed = installed_fonts() if installed is None else set(installed)
    return next((name for name in CHINESE_FONTS if name in installed), None)


def _english(message):
    return message


def figure_language(translate, installed=None):
    """(font, say) for a figure: in Chinese, with a Chinese font among ``installed`` (default: the
    fonts matplotlib has), that font and ``translate``; in Chinese without one, None and a ``say``
    that keeps the English; in English, None and ``translate`` (English)."""
    if language() != "zh":
        return None, translate
    font = chinese_font(installed)
    return (font, translate) if font else (None, _english)


def font_settings(font):
    """The matplotlib settings that draw a figure's words in ``font`` (the rest, such as the
    minus sign, in matplotlib's own font); {} for None: matplotlib's defaults."""
    return {"font.family": [font, FALLBACK]} if font else {}


@contextmanager
def figure_words(translate, installed=None):
    """``with figure_words(tr) as say:`` the figures made inside the block get their words from
    ``say``, and the font those words need (see ``figure_language``)."""
    from matplotlib import rc_context

    font, say = figure_language(translate, installed)
    with rc_context(font_settings(font)):
        yield say
