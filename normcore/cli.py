"""The ``normcore`` command line. Each subcommand lives in its own module under
``normcore/commands/`` with ``add_arguments(parser)`` and ``run(args) -> exit status``; the
table of subcommands is ``normcore.commands.COMMANDS``.

The parser speaks the language in use (``--lang``, ``NORMCORE_LANG``, the locale), argparse's
own words included: its headings and --help's help are set in the language when the parser is
made, and an error argparse wrote in English is read back against argparse's message templates
(``ARGPARSE_ERRORS``) and written again from their translations (``argparse_in_language``).
Nothing of argparse's own is changed, so any other parser in the process stays as it was. Help
and errors are wrapped by display width (a Chinese character takes two columns)."""

import argparse
import difflib
import importlib
import importlib.metadata
import os
import re
import sys

from . import i18n
from .commands import COMMANDS
from .commands._options import HelpFormatter, add_language_option
from .i18n import N_, translator
from .i18n.width import fill

_ = translator("cli")

# argparse's error messages that a user of normcore can meet, exactly as argparse (Python 3.11)
# formats them; an error argparse writes from another template stays English
ARGPARSE_ERRORS = (
    N_("argument %(argument_name)s: %(message)s"), N_("unrecognized arguments: %s"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"), N_("expected one argument"),
    N_("expected at most one argument"), N_("expected at least one argument"),
    N_("the following arguments are required: %s"), N_("one of the arguments %s is required"),
    N_("not allowed with argument %s"), N_("ignored explicit argument %r"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
)
_FIELD = re.compile(r"%(?:\((\w+)\))?[sr]")  # a field of a template: %s, %r, %(name)s, %(name)r


def _fields(template, message):
    """[(field name or None for %s, its text)] if argparse made ``message`` from ``template``,
    else None."""
    pieces = _FIELD.split(template)  # text, field name, text, ...
    pattern = "".join(re.escape(p or "") if i % 2 == 0 else "(.*?)" for i, p in enumerate(pieces))
    found = re.fullmatch(pattern, message, re.DOTALL)
    return None if found is None else list(zip(pieces[1::2], found.groups()))


def _refill(template, fields):
    """``template`` with its fields replaced by their texts (named fields by name)."""
    named = {name: text for name, text in fields if name}
    unnamed = iter(text for name, text in fields if not name)
    return _FIELD.sub(lambda field: named[field.group(1)] if field.group(1) else next(unnamed), template)


def argparse_in_language(message):
    """An error message argparse formatted in English, in the language in use: the template it
    was made from is found, its fields read back (a nested message translated in turn) and
    written into the template's translation. A message from no known template is returned as
    it is (normcore's own messages are translated where they are made)."""
    for template in ARGPARSE_ERRORS:
        fields = _fields(template, message)
        if fields is not None:
            fields = [(name, argparse_in_language(text) if name == "message" else text)
                      for name, text in fields]
            return _refill(_(template), fields)
    return message


class Parser(argparse.ArgumentParser):
    """argparse's parser in the language in use, its error messages wrapped at 80 display
    columns (its subparsers inherit all of it)."""

    def __init__(self, *args, add_help=True, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, add_help=False, **kwargs)
        self._positionals.title = _("positional arguments")
        self._optionals.title = _("options")
        if add_help:
            self.add_argument("-h", "--help", action="help", help=_("show this help message and exit"))

    def parse_known_args(self, args=None, namespace=None):
        """argparse's, except that an option's value that starts with a minus and a digit
        (``--shape -3x4``) is that option's value, so that the option's own check explains it
        (argparse would take -3x4 for an option and say "expected one argument")."""
        args = sys.argv[1:] if args is None else list(args)
        return super().parse_known_args(self._values_joined(args), namespace)

    def _values_joined(self, args):
        """``args`` with each ``--option -3x4`` written ``--option=-3x4`` where the option takes
        one value and -3x4 (a minus, then a digit) is no option of this parser."""
        joined, i = [], 0
        while i < len(args) and args[i] != "--":
            action = self._option_string_actions.get(args[i])
            following = args[i + 1] if i + 1 < len(args) else ""
            if (action is not None and action.nargs is None and args[i].startswith("--")
                    and re.match(r"-\d", following) and following not in self._option_string_actions):
                joined.append(f"{args[i]}={following}")
                i += 2
            else:
                joined.append(args[i])
                i += 1
        return joined + args[i:]

    def long_options(self):
        """Every ``--option`` this parser takes."""
        return [o for action in self._actions for o in action.option_strings if o.startswith("--")]

    def error(self, message):
        self.print_usage(sys.stderr)
        message = _("{prog}: error: {message}").format(prog=self.prog, message=argparse_in_language(message))
        self.exit(2, fill(message, 80, subsequent_indent="  ") + "\n")


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


def build_parser():
    """The parser of every subcommand, its texts in the language in use."""
    parser = Parser(prog="normcore", description=_(DESCRIPTION), epilog=_(EPILOG))
    parser.add_argument("--version", action="version", version=f"%(prog)s {version()}",
                        help=_("show program's version number and exit"))
    add_language_option(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.commands = {}  # name -> the command's own parser, which reports what it cannot parse
    for name, (module, help_) in COMMANDS.items():
        p = parser.commands[name] = sub.add_parser(name, help=_(help_), description=_(help_))
        p.set_defaults(_module=module)
        add_language_option(p)  # also after the command's name
        importlib.import_module(f"normcore.commands.{module}").add_arguments(p)
        p.formatter_class = HelpFormatter  # whatever the command chose: width by display columns
    return parser


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


def _unrecognized(parser, unknown):
    """Exit with the usage of the command that was given (not normcore's own) and the arguments
    it does not take, with the option meant where one is a typing slip away (``--quik``)."""
    message = "unrecognized arguments: " + " ".join(unknown)  # argparse's words, translated by error()
    meant = [close[0] for arg in unknown if arg.startswith("--")
             for close in [difflib.get_close_matches(arg.split("=", 1)[0], parser.long_options(), n=1)] if close]
    if meant:
        message = _("{message} (the closest option: {options})").format(message=message, options=", ".join(meant))
    parser.error(message)


INTERRUPTED = 130  # the exit status of a command stopped by Ctrl-C, as a shell reports it


def main(argv=None):
    """Run the command ``argv`` (default: the command line); its exit status. Ctrl-C in any
    command ends it with one line on stderr and exit status 130, never a traceback (a
    command with a process of its own ends it first: ``practice/sandbox.py``)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(_("normcore: interrupted"), file=sys.stderr)
        return INTERRUPTED


def _main(argv):
    argv = sys.argv[1:] if argv is None else list(argv)
    chosen = _language_in(argv)  # an unknown --lang is left to the parser, which names the choices
    try:
        i18n.set_language(chosen if chosen in i18n.LANGUAGES else None)
    except ValueError as err:  # NORMCORE_LANG names no language normcore speaks
        print(fill(f"normcore: NORMCORE_LANG: {err}", 80), file=sys.stderr)
        return 2
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        _unrecognized(parser.commands.get(args.command, parser), unknown)
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
