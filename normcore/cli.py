"""The ``normcore`` command line. Each subcommand lives in its own module under
``normcore/commands/`` with ``add_arguments(parser)`` and ``run(args) -> exit status``; the
table of subcommands is ``normcore.commands.COMMANDS``."""

import argparse
import importlib
import importlib.metadata
import os
import sys
import textwrap

from . import i18n
from .commands import COMMANDS


class Parser(argparse.ArgumentParser):
    """argparse's parser, its error messages wrapped at 80 columns (its subparsers inherit it)."""

    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(2, textwrap.fill(f"{self.prog}: error: {message}", 80, subsequent_indent="  ",
                                   break_on_hyphens=False, break_long_words=False) + "\n")


def version():
    """The installed distribution's version; from a clone that is not installed, the package's."""
    try:
        return importlib.metadata.version("normcore")
    except importlib.metadata.PackageNotFoundError:
        from . import __version__
        return __version__


def build_parser():
    parser = Parser(
        prog="normcore",
        description="normcore: normalization layers with hand-derived backward passes, in NumPy.",
        epilog="examples:\n  normcore tour                   start here\n"
               "  normcore explain layernorm      one backward, node by node\n"
               "  normcore COMMAND --help         what a command does, with examples",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}")
    _add_language_option(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module)
        _add_language_option(p, default=argparse.SUPPRESS)  # also after the command's name
        importlib.import_module(f"normcore.commands.{module}").add_arguments(p)
    return parser


def _add_language_option(parser, default):
    parser.add_argument("--lang", choices=i18n.LANGUAGES, default=default,
                        help="the language normcore speaks: zh or en (default: NORMCORE_LANG, "
                             "else the locale, else en)")


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
        print(textwrap.fill(f"normcore: NORMCORE_LANG: {err}", 80), file=sys.stderr)
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
