"""Argument types shared by the subcommands. Raising ``argparse.ArgumentTypeError`` lets
argparse name the option in its message (``argument --seed: ...``) and exit with status 2."""

import argparse
import re

from .. import i18n
from ..i18n import N_, translator
from ..i18n.width import display_width, pad, wrap

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


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (they are laid out by hand); option help wrapped by
    display width; "usage:" in the language in use, padded to the width of the English word so
    that argparse's alignment of the usage lines holds; a section's title ("options") followed
    by the language's colon (argparse writes an ASCII one after every title). Every parser of
    normcore formats its help with it, the subcommands' and ``practice``'s actions' too."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._headings = set()

    def _split_lines(self, text, width):
        return wrap(text, width)

    def start_section(self, heading):
        if heading:
            self._headings.add(heading)
        super().start_section(heading)

    def format_help(self):
        text = super().format_help()
        for heading in self._headings:  # the line argparse made of it: indent, title, ':'
            titled = _("{title}:").format(title=heading).replace("\\", "\\\\")
            text = re.sub(rf"(?m)^( *){re.escape(heading)}:$", rf"\g<1>{titled}", text)
        return text

    def _format_usage(self, usage, actions, groups, prefix):
        if prefix is not None:
            return super()._format_usage(usage, actions, groups, prefix)
        text = super()._format_usage(usage, actions, groups, "usage: ")
        word = pad(_("usage:"), display_width("usage:"))
        return word + " " + text[len("usage: "):]
