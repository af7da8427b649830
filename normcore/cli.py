"""The ``normcore`` command line. Each subcommand lives in its own module under
``normcore/commands/`` with ``add_arguments(parser)`` and ``run(args) -> exit status``; the
table of subcommands is ``normcore.commands.COMMANDS``."""

import argparse
import importlib
import importlib.metadata
import os
import sys
import textwrap

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
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=help_)
        p.set_defaults(_module=module)
        importlib.import_module(f"normcore.commands.{module}").add_arguments(p)
    return parser


def main(argv=None):
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
