"""The ``normcore`` command line. Each subcommand lives in its own module under
``normcore/commands/`` with ``add_arguments(parser)`` and ``run(args) -> exit status``; the
table of subcommands is ``normcore.commands.COMMANDS``.

The parser speaks the language in use (``--lang``, ``NORMCORE_LANG``, the locale), argparse's
own words included: while the parser builds, parses or formats, argparse looks its words up in
normcore's "cli" catalog (``_argparse_speaks_normcore``) and goes back to its own lookup after,
so nothing outside the parser changes. Help and errors are wrapped by display width (a Chinese
character takes two columns)."""

import argparse
import importlib
import importlib.metadata
import os
import sys
from contextlib import contextmanager

from . import i18n
from .commands import COMMANDS
from .i18n import N_, translator
from .i18n.width import display_width, fill, pad, wrap

_ = translator("cli")

# argparse's words that a user of normcore meets, exactly as argparse (Python 3.11) spells them:
# marked here so that the catalog has them; argparse itself asks for them.
ARGPARSE_WORDS = (
    N_("usage:"), N_("positional arguments"), N_("options"), N_("show this help message and exit"),
    N_("argument %(argument_name)s: %(message)s"), N_("unrecognized arguments: %s"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"), N_("expected one argument"),
    N_("expected at most one argument"), N_("expected at least one argument"),
    N_("the following arguments are required: %s"), N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"), N_("ignored explicit argument %r"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)


@contextmanager
def _argparse_speaks_normcore():
    """argparse's words from normcore's catalog, for the time of the ``with`` block only."""
    saved = argparse._, argparse.ngettext
    argparse._, argparse.ngettext = _, _.ngettext
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (they are laid out by hand); option help wrapped by
    display width; "usage:" in the language in use, padded to the width of the English word so
    that argparse's alignment of the usage lines holds."""

    def _split_lines(self, text, width):
        return wrap(text, width)

    def _format_usage(self, usage, actions, groups, prefix):
        if prefix is not None:
            return super()._format_usage(usage, actions, groups, prefix)
        text = super()._format_usage(usage, actions, groups, "usage: ")
        word = pad(_("usage:"), display_width("usage:"))
        return word + " " + text[len("usage: "):]


class Parser(argparse.ArgumentParser):
    """argparse's parser in the language in use, its error messages wrapped at 80 display
    columns (its subparsers inherit all of it)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        with _argparse_speaks_normcore():  # the "options" heading, --help's help
            super().__init__(*args, **kwargs)

    def parse_args(self, args=None, namespace=None):  # "unrecognized arguments" is said here
        with _argparse_speaks_normcore():
            return super().parse_args(args, namespace)

    def parse_known_args(self, args=None, namespace=None):
        with _argparse_speaks_normcore():
            return super().parse_known_args(args, namespace)

    def format_usage(self):
        with _argparse_speaks_normcore():
            return super().format_usage()

    def format_help(self):
        with _argparse_speaks_normcore():
            return super().format_help()

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, fill(_("{prog}: error: {message}").format(prog=self.prog, message=message),
                          80, subsequent_indent="  ") + "\n")


def version():
    """The installed distribution's version; from a clone that is not installed, the package's."""
    try:
        return importlib.metadata.version("normcore")
    except importlib.metadata.PackageNotFoundError:
        from . import __version__
        return __version__


DESCRIPTION = N_("normcore: normalization layers with hand-derived backward passes, in NumPy.")
EPILOG = N_("""\
examples:
  normcore tour                   start here
  normcore explain layernorm      one backward, node by node
  normcore COMMAND --help         what a command does, with examples""")
LANG_HELP = N_("the language normcore speaks: zh or en (default: NORMCORE_LANG, else the "
               "locale, else en)")


def build_parser():
    """The parser of every subcommand, its texts in the language in use."""
    parser = Parser(prog="normcore", description=_(DESCRIPTION), epilog=_(EPILOG))
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}",
                        help=_("show program's version number and exit"))
    _add_language_option(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=_(help_), description=_(help_))
        p.set_defaults(_module=module)
        _add_language_option(p, default=argparse.SUPPRESS)  # also after the command's name
        importlib.import_module(f"normcore.commands.{module}").add_arguments(p)
        p.formatter_class = HelpFormatter  # whatever the command chose: width by display columns
    return parser


def _add_language_option(parser, default):
    parser.add_argument("--lang", choices=i18n.LANGUAGES, default=default, help=_(LANG_HELP))


def _language_in(argv):
    """The value of the last --lang in ``argv`` (None if there is none): the language must be
    known before the parser is built, so that its help texts are in it."""
    found = None
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            found = argv[i + 1]
        elif arg.startswith("--lang="):
            found = arg.split("=", 1)[1]
    return found


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _language_in(argv)  # an unknown --lang is left to the parser, which names the choices
    try:
        i18n.set_language(chosen if chosen in i18n.LANGUAGES else None)
    except ValueError as err:  # NORMCORE_LANG names no language normcore speaks
        print(fill(f"normcore: NORMCORE_LANG: {err}", 80), file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        return int(importlib.import_module(f"normcore.commands.{args._module}").run(args) or 0)
    except BrokenPipeError:  # the reader went away (e.g. `normcore tour | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
