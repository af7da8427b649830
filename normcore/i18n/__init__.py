"""Translated messages: normcore speaks English or Chinese.

The language is, in order: ``set_language`` (what ``normcore --lang zh|en`` calls), the
``NORMCORE_LANG`` variable, the locale (``LC_ALL``, ``LC_MESSAGES`` or ``LANG`` beginning with
``zh``), else English. Messages are looked up in gettext catalogs, one per area of normcore (a
*domain*), compiled into ``normcore/i18n/locale/zh/LC_MESSAGES/<domain>.mo`` from the ``.po``
files beside them (``python -m normcore.i18n update`` extracts, merges and compiles them; it
needs Babel, in the ``dev`` extra). A module translates with its domain's translator:

    from ..i18n import N_, translator
    _ = translator("cli")
    print(_("{n} layers, all gradients pass.").format(n=total))
    HELP = N_("check every backward")   # marked here, translated where it is shown: _(HELP)

Messages are English in the source; formulas, code and numbers are never translated, and
``str.format`` fields keep numbers out of the message so that the language changes no number.
Widths for the terminal come from ``normcore.i18n.width`` (a Chinese character takes two columns).
"""

import gettext
import os
import unicodedata
from contextlib import contextmanager
from functools import cache
from pathlib import Path

LANGUAGES = ("en", "zh")  # English is the source language: its catalogs are the messages themselves
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
# the areas of normcore, each with its own catalog (normcore.i18n.catalogs lists their sources)
DOMAINS = ("cli", "explain", "practice", "catalog")

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


def language_from_environment(environ=None):
    """NORMCORE_LANG if set, else the first of LC_ALL, LC_MESSAGES, LANG that is set: 'zh' when it
    begins with zh, else 'en'. An unknown NORMCORE_LANG raises ValueError."""
    environ = os.environ if environ is None else environ
    if environ.get("NORMCORE_LANG"):
        return normalize_language(environ["NORMCORE_LANG"])
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        if environ.get(name):
            return "zh" if environ[name].lower().startswith("zh") else "en"
    return "en"


def set_language(lang):
    """Speak ``lang`` ('zh' or 'en', or a locale name) from now on; None goes back to the
    environment's choice. Returns the language now in use."""
    global _chosen
    _chosen = None if lang is None else normalize_language(lang)
    return language()


def language():
    """The language in use now: 'en' or 'zh'."""
    return _chosen if _chosen is not None else language_from_environment()


@cache
def _catalog(domain, lang):
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(domain, LOCALE_DIR, languages=[lang], fallback=True)


class translator:
    """The messages of one domain, translated into the language in use when called.

    ``_(message)`` translates one message; ``_.ngettext(singular, plural, count)`` picks the form for
    ``count`` (English has two, Chinese one)."""

    def __init__(self, domain):
        if domain not in DOMAINS:
            raise ValueError(f"unknown message domain {domain!r}; expected one of {', '.join(DOMAINS)}")
        self.domain = domain

    def __call__(self, message):
        return _catalog(self.domain, language()).gettext(message)

    def ngettext(self, singular, plural, count):
        return _catalog(self.domain, language()).ngettext(singular, plural, count)

    def __repr__(self):
        return f"translator({self.domain!r})"


def sentences(*texts):
    """Sentences written one after another, as each language writes them: a space after an
    English sentence, none after a Chinese one (no space follows 。, ！, ？ or ）). Empty texts
    are left out; each text's own spaces at its ends are dropped."""
    out = ""
    for text in (str(t).strip() for t in texts):
        if text:
            out += ("" if not out or unicodedata.east_asian_width(out[-1]) in ("W", "F") else " ") + text
    return out


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
