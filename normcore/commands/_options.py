"""Argument types shared by the subcommands. Raising ``argparse.ArgumentTypeError`` lets
argparse name the option in its message (``argument --seed: ...``) and exit with status 2."""

import argparse

from .. import i18n
from ..i18n import N_, translator

_ = translator("cli")
LANG_HELP = N_("the language normcore speaks: zh or en (default: NORMCORE_LANG, else the "
               "locale, else en)")


def add_language_option(parser, default=argparse.SUPPRESS):
    """``--lang zh|en`` on ``parser``: on normcore's own parser (default None), and on every
    subcommand's (default SUPPRESS, so that a --lang before the command is kept), so that it
    may come anywhere: ``normcore practice new batchnorm --lang zh``."""
    parser.add_argument("--lang", choices=i18n.LANGUAGES, default=default, help=_(LANG_HELP))


def seed(text):
    """A random seed: an integer >= 0 (what ``numpy.random.default_rng`` accepts)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(_("expected an integer >= 0, got {text!r}").format(text=text))
    return value


def positive_float(text):
    """A number > 0, such as a tolerance."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(_("expected a number > 0, got {text!r}").format(text=text))
    return value


def positive_int(text):
    """A whole number >= 1, such as a count of heads, groups or ranks."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(_("expected a positive integer, got {text!r}").format(text=text))
    return value
