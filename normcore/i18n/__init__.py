"""Translated messages: normcore speaks English or Chinese.

The language is, in order: ``set_language`` (what ``normcore --lang zh|en`` calls), the
``NORMCORE_LANG`` variable, the locale as gettext reads it (``LANGUAGE``, a list such as
``zh_CN:en``, unless the locale is C; then the first of ``LC_ALL``, ``LC_MESSAGES``, ``LANG``),
Chinese when it begins with ``zh``, else English. normcore's Chinese is Simplified: a Traditional
Chinese locale (``zh_TW``, ``zh_HK``, ``zh_MO``, ``zh-Hant``) gets it, and normcore says so once,
on stderr. Messages are looked up in gettext catalogs, one per area of normcore (a
*domain*), compiled into ``normcore/i18n/locale/zh/LC_MESSAGES/<domain>.mo`` from the ``.po``
files beside them (``python -m normcore.i18n update`` extracts, merges and compiles them; it
needs Babel, in the ``dev`` extra). A module translates with its domain's translator:

    from ..i18n import N_, translator
    _ = translator("cli")
    print(_("{n} layers, all gradients pass.").format(n=total))
    HELP = N_("check every backward")   # marked here, translated where it is shown: _(HELP)

A notebook's code cells print through the ``notebooks`` domain, as ``tr = translator("notebooks")``
(``_`` is IPython's last result), so that the Chinese notebook, run with ``NORMCORE_LANG=zh``,
prints Chinese. A figure's words go through ``normcore.i18n.figures.figure_words``: Chinese only
when matplotlib has a font with Chinese glyphs, English otherwise.

Messages are English in the source; formulas, code and numbers are never translated, and
``str.format`` fields keep numbers out of the message so that the language changes no number.
Widths for the terminal come from ``normcore.i18n.width`` (a Chinese character takes two columns).
"""

import gettext
import os
import re
import string
import sys
from contextlib import contextmanager
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")  # English is the source language: its catalogs are the messages themselves
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
# the areas of normcore, each with its own catalog (normcore.i18n.catalogs lists their sources)
DOMAINS = ("cli", "explain", "practice", "catalog", "notebooks")

_chosen = None  # set_language's choice; None: from the environment


def N_(message):
    """Mark ``message`` for extraction without translating it (translate it where it is shown)."""
    return message


def normalize_language(value):
    """'zh', 'zh_CN.UTF-8', 'zh-Hans' -> 'zh'; 'en', 'en_US', 'C', 'POSIX' -> 'en'; anything else
    raises ValueError naming what is expected."""
    text = str(value).strip()
    head = text.replace("-", "_").split("_")[0].split(".")[0].lower()
    if head == "zh":
        return "zh"
    if head in ("en", "c", "posix"):
        return "en"
    raise ValueError(f"unknown language {value!r}; expected one of {', '.join(LANGUAGES)} "
                     f"(or a locale such as zh_CN.UTF-8)")


LOCALE_VARIABLES = ("LC_ALL", "LC_MESSAGES", "LANG")  # the first one set is the locale
TRADITIONAL = {"tw", "hk", "mo", "hant"}  # regions and the script written in Traditional Chinese
_noted = False  # whether the note that Traditional Chinese gets Simplified has been shown
SIMPLIFIED_NOTE = N_("normcore: {locale} asks for Traditional Chinese; normcore's Chinese is "
                     "Simplified, and that is what it shows.")


def _locale_language(value):
    """'zh' or 'en' for a locale name; None for a language normcore does not speak."""
    head = value.replace("-", "_").split("_")[0].split(".")[0].split("@")[0].lower()
    return {"zh": "zh", "en": "en", "c": "en", "posix": "en"}.get(head)


def chosen_locale(environ=None):
    """The locale name the environment's language comes from, as gettext picks it: NORMCORE_LANG
    if set; else the first entry of LANGUAGE (a colon-separated list) that normcore speaks,
    unless the locale is C or POSIX; else the first of LC_ALL, LC_MESSAGES, LANG that is set.
    None when nothing is set."""
    environ = os.environ if environ is None else environ
    if environ.get("NORMCORE_LANG"):
        return environ["NORMCORE_LANG"]
    locale = next((environ[name] for name in LOCALE_VARIABLES if environ.get(name)), None)
    if locale is None or locale.split(".")[0].upper() not in ("C", "POSIX"):
        for entry in environ.get("LANGUAGE", "").split(":"):
            if entry and _locale_language(entry):
                return entry
    return locale


def language_from_environment(environ=None):
    """'zh' or 'en' from the environment (``chosen_locale``): 'zh' when the locale begins with
    zh, else 'en'. An unknown NORMCORE_LANG raises ValueError."""
    environ = os.environ if environ is None else environ
    locale = chosen_locale(environ)
    if environ.get("NORMCORE_LANG"):
        return normalize_language(locale)
    return "zh" if locale and _locale_language(locale) == "zh" else "en"


def is_traditional(locale):
    """Whether a Chinese locale name asks for Traditional Chinese: zh_TW, zh_HK.UTF-8, zh-Hant."""
    parts = re.split(r"[-_.@]", str(locale).lower())
    return parts[0] == "zh" and bool(TRADITIONAL & set(parts[1:]))


def _note_simplified():
    """Say once, on stderr, that a Traditional Chinese locale gets Simplified Chinese."""
    global _noted
    locale = chosen_locale()
    if _noted or locale is None or not is_traditional(locale):
        return
    _noted = True
    print(translator("cli")(SIMPLIFIED_NOTE).format(locale=locale), file=sys.stderr)


def set_language(lang):
    """Speak ``lang`` ('zh' or 'en', or a locale name) from now on; None goes back to the
    environment's choice. Returns the language now in use."""
    global _chosen
    _chosen = None if lang is None else normalize_language(lang)
    return language()


def language():
    """The language in use now: 'en' or 'zh'."""
    if _chosen is not None:
        return _chosen
    lang = language_from_environment()
    if lang == "zh" and not _noted:
        _note_simplified()
    return lang


@cache
def _catalog(domain, lang):
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(domain, LOCALE_DIR, languages=[lang], fallback=True)


# Chinese text: an ideograph, and the fullwidth punctuation that takes no space around it
_IDEOGRAPH = "[\u2e80-\u2fff\u3040-\u9fff\uf900-\ufaff]"
_PUNCTUATION = "[\u3000-\u303f\uff00-\uffef]"
_CHINESE = f"(?:{_IDEOGRAPH}|{_PUNCTUATION})"
_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use marks around a value while a message is filled


def _space_between(before, after):
    """' ' between two pieces of text, '' where Chinese typesetting puts none: after or before
    fullwidth punctuation (。，（）), and between two Chinese characters."""
    if re.search(f"{_PUNCTUATION}$", before) or re.match(_PUNCTUATION, after):
        return ""
    if re.search(f"{_IDEOGRAPH}$", before) and re.match(_IDEOGRAPH, after):
        return ""
    return " "


def joined(*parts):
    """Sentences or phrases one after another, the empty ones left out: a space between them in
    English, none after a Chinese sentence's 。 or before （, nor between Chinese words."""
    out = ""
    for part in parts:
        part = str(part).strip(" ")
        if part:
            out = out + _space_between(out, part) + part if out else part
    return out


class _Marking(string.Formatter):
    """str.format, with each value between two private-use marks."""

    def format_field(self, value, format_spec):
        spec = format_spec.replace(_OPEN, "").replace(_CLOSE, "")
        return _OPEN + super().format_field(value, spec) + _CLOSE


class Message(str):
    """A translated message. Its ``format`` is str.format, except that a value which begins
    or ends with a Chinese word takes no space from the Chinese text beside it: "{title} 逐步推导"
    filled with 残差连接 reads 残差连接逐步推导, not 残差连接 逐步推导."""

    def format(self, *args, **kwargs):
        text = _Marking().vformat(str(self), args, kwargs)
        text = re.sub(f"(?<={_CHINESE}) (?={_OPEN}{_CHINESE})", "", text)
        text = re.sub(f"(?<={_CHINESE}{_CLOSE}) (?={_OPEN}?{_CHINESE})", "", text)
        return text.replace(_OPEN, "").replace(_CLOSE, "")


class translator:
    """The messages of one domain, translated into the language in use when called.

    ``_(message)`` translates one message; ``_.ngettext(singular, plural, count)`` picks the form for
    ``count`` (English has two, Chinese one)."""

    def __init__(self, domain):
        if domain not in DOMAINS:
            raise ValueError(f"unknown message domain {domain!r}; expected one of {', '.join(DOMAINS)}")
        self.domain = domain

    def __call__(self, message):
        return Message(_catalog(self.domain, language()).gettext(message))

    def ngettext(self, singular, plural, count):
        return Message(_catalog(self.domain, language()).ngettext(singular, plural, count))

    def __repr__(self):
        return f"translator({self.domain!r})"


@contextmanager
def speaking(lang):
    """``with speaking("zh"):`` the messages are in ``lang`` inside the block; afterwards the
    language is what it was (a choice of ``set_language``, or the environment's)."""
    global _chosen
    saved = _chosen
    set_language(lang)
    try:
        yield
    finally:
        _chosen = saved
