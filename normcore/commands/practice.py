"""``normcore practice``: interview practice. Write a norm layer by hand, get graded, learn which
mistake you made.

    normcore practice list [--mistakes]
    normcore practice new NAME [--dir DIR] [--force] [--forward-only | --torch]
                             [--no-running-stats]
    normcore practice check FILE [--name CLASS] [--layer NAME] [--json FILE|-] [--csv FILE|-]
    normcore practice check FILE FILE ... | DIR  [--json FILE|-] [--csv FILE|-]
        (both with [--forward-only] [--hints none|brief|full] [--timeout S] [--memory GIB])
    normcore practice solution NAME [--torch]
    normcore practice interview [NAME] [--minutes M] [--dir DIR] [--difficulty LEVEL] [--seed N]
                                [--timeout S]
    normcore practice history [--json]
    normcore practice questions [ID] [--topic T[,T]] [--random N] [--seed N] [--list]

``check`` exits with 0 when every check passes, 1 when one fails (or is not implemented yet)
and 2 when a file cannot be graded (missing, does not import, no layer class). One file gets
the detailed report; several (or a folder) one summary table (``practice/classroom.py``). Each
file runs in a child process with a time limit per probe and a memory limit
(``practice/sandbox.py``). A path that cannot be read (FILE) or written (--json, --csv, --dir)
is refused before any work, with exit status 2.

This file is what a user can type (the parser, with each subcommand's help and examples);
``practice_actions.py`` is what each subcommand does.
"""

import argparse

from ..i18n import translator
from ..i18n.width import fill
from ..practice import EXERCISES, interview, questions, torch_track
from ..practice.report import HINT_LEVELS
from ..practice.sandbox import GiB, Limits
from ._options import HelpFormatter, add_language_option, positive_float, seed
from .practice_actions import ACTIONS, WIDTH

_ = translator("practice")


def _sub(sub, name, help_, description, examples):
    """A subcommand whose --help shows a description and its examples (and takes --lang too:
    ``normcore practice new batchnorm --lang zh``)."""
    p = sub.add_parser(name, help=help_, description=fill(description, WIDTH - 2),
                       epilog=_("example:") + "\n" + "\n".join("  " + e for e in examples),
                       formatter_class=HelpFormatter)
    add_language_option(p)
    return p


def add_arguments(parser):
    parser.formatter_class = HelpFormatter
    parser.epilog = (_("example, from easy to hard:") + "\n  normcore practice list\n"
                     "  normcore practice new dropout\n  normcore practice check my_dropout.py\n"
                     + _("grading a class:") + "\n  normcore practice check submissions/ --csv results.csv")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    p = _sub(sub, "list", _("the exercises, easy to hard (and the catalog with --mistakes)"),
             _("The exercises in the order to practise them, easy to hard, each with its "
               "difficulty, its time box and what it asks; with --mistakes, every mistake the "
               "grader can name, with its symptom."),
             ["normcore practice list", "normcore practice list --mistakes"])
    p.add_argument("--mistakes", action="store_true",
                   help=_("also list every catalogued mistake with its symptom"))
    p = _sub(sub, "new", _("write my_NAME.py, a skeleton to fill in"),
             _("Write my_NAME.py: the exercise's class with its contract, a worked numeric "
               "example in the docstring, and forward/backward left as TODOs."),
             ["normcore practice new layernorm --dir ~/practice",
              "normcore practice new layernorm --torch", "normcore practice new batchnorm --lang zh",
              "normcore practice new batchnorm --no-running-stats"])
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--dir", default=".",
                   help=_("where to write it (default: the current directory)"))
    p.add_argument("--force", action="store_true", help=_("overwrite an existing file"))
    p.add_argument("--forward-only", action="store_true",
                   help=_("ask for the forward alone: no backward in the skeleton (e.g. "
                                   "normcore practice new layernorm --forward-only)"))
    p.add_argument("--torch", action="store_true",
                   help=_("a torch.nn.Module with forward only, written my_NAME_torch.py "
                                   "({names})").format(names=", ".join(torch_track.EXERCISES)))
    p.add_argument("--no-running-stats", action="store_true",
                   help=_("BatchNorm in training alone: no running statistics and no "
                          "evaluation mode, whose checks the grader then lists as 'not "
                          "written' (NumPy, or with --torch)"))
    p = _sub(sub, "check", _("grade files against normcore's own layers (exit 1 on a failure)"),
             _("Grade a file against normcore's own layer and name the catalogued mistake behind "
               "each failing check. Several files, or a folder (every *.py in it), give one "
               "summary table: file, exercise, checks passed, mistakes named; --json and --csv "
               "write the same rows for a course's records. Exit status: 0 when every file "
               "passes, 1 when one fails (or is not implemented yet), 2 when one cannot be "
               "graded (missing, does not import, no layer class). Each file runs in a process "
               "of its own, with a time limit per probe (--timeout) and a memory limit "
               "(--memory): a file that hangs, exits, crashes or prints without end is stopped "
               "and its row says what happened; the other files are graded as usual."),
             ["normcore practice check my_layernorm.py",
              "normcore practice check submissions/ --json results.json --csv -",
              "normcore practice check submissions/ --timeout 10"])
    p.add_argument("files", nargs="+", metavar="FILE",
                   help=_("a Python file, or a folder of them"))
    p.add_argument("--name", metavar="CLASS",
                   help=_("the class to grade in each file (default: the file's layer "
                                   "class)"))
    p.add_argument("--layer", choices=list(EXERCISES), metavar="NAME",
                   help=_("the exercise it is ({names}; default: from the class name); "
                                   "one file only").format(names=", ".join(EXERCISES)))
    p.add_argument("--json", metavar="FILE|-",
                   help=_("also write the results as a JSON list (- for stdout)"))
    p.add_argument("--csv", metavar="FILE|-",
                   help=_("also write the results as CSV (- for stdout)"))
    p.add_argument("--forward-only", action="store_true",
                   help=_("grade the forward alone: the backward's checks are 'not "
                                   "asked' (a file with FORWARD_ONLY = True, or no backward "
                                   "method, is graded so anyway)"))
    _add_timeout(p)
    p.add_argument("--memory", type=positive_float, metavar="GIB", default=Limits.memory / GiB,
                   help=_("the memory a file may allocate, in GiB (default: {gib:g}; e.g. "
                          "--memory 4)").format(gib=Limits.memory / GiB))
    p.add_argument("--hints", choices=list(HINT_LEVELS), default="full",
                   help=_("full (default): each mistake's symptom, hint and where "
                                   "normcore teaches it; brief: the mistakes' names and the "
                                   "checks they show in; none: pass or fail per check (e.g. "
                                   "--hints brief)"))
    p = _sub(sub, "solution", _("print a reference answer"),
             _("Print a reference answer: NumPy only, forward and backward, in the names of the "
               "skeleton's docstring."),
             ["normcore practice solution rmsnorm > rmsnorm_answer.py",
              "normcore practice solution layernorm --torch"])
    p.add_argument("name", choices=list(EXERCISES), metavar="NAME", help=", ".join(EXERCISES))
    p.add_argument("--torch", action="store_true",
                   help=_("the PyTorch track's answer (an nn.Module)"))
    p = _sub(sub, "interview", _("a mock interview: a time box, no hints, graded at the end"),
             _("A mock interview: write the skeleton of NAME (or of an exercise drawn at random, "
               "of --difficulty if given), print the time box, wait until you press Enter (or "
               "stdin closes) or the time is up, then grade the file with no hints, say whether "
               "it was over time and record the attempt in the history ($NORMCORE_HOME, else "
               "~/.normcore/, practice_history.jsonl); normcore practice history shows it, with "
               "the mistakes named."),
             ["normcore practice interview layernorm --minutes 20",
              "normcore practice interview --difficulty easy --dir ~/practice"])
    p.add_argument("name", nargs="?", choices=list(EXERCISES), metavar="NAME",
                   help=_("the exercise (default: one at random); {names}").format(
                       names=", ".join(EXERCISES)))
    p.add_argument("--minutes", type=_minutes, metavar="M",
                   help=_("the time box in minutes (default: the exercise's, as practice "
                                   "list shows; e.g. --minutes 20)"))
    p.add_argument("--dir", default=".",
                   help=_("where to write my_NAME.py (default: the current directory)"))
    p.add_argument("--difficulty", choices=list(interview.LEVELS),
                   help=_("draw the exercise among the easy, medium or hard ones"))
    p.add_argument("--seed", type=int, help=_("seed the random draw (e.g. --seed 3)"))
    p.add_argument("--force", action="store_true",
                   help=_("overwrite an existing my_NAME.py"))
    p.add_argument("--forward-only", action="store_true",
                   help=_("ask for the forward alone"))
    p.add_argument("--torch", action="store_true",
                   help=_("answer as a torch.nn.Module, forward only (e.g. normcore "
                                   "practice interview layernorm --torch)"))
    p.add_argument("--no-wait", action="store_true",
                   help=_("do not wait for Enter: grade at once (for scripts)"))
    _add_timeout(p)
    p = _sub(sub, "history", _("the mock interviews so far, and progress per exercise"),
             _("The mock interviews recorded by normcore practice interview: date, exercise, "
               "minutes taken of the time box, checks passed and the mistakes the grade named "
               "(hidden during the interview); then per exercise the first, the latest and the "
               "best attempt."),
             ["normcore practice history", "normcore practice history --json > interviews.json"])
    p.add_argument("--json", action="store_true",
                   help=_("print the attempts and progress as JSON"))
    _add_questions(sub)
    parser.set_defaults(_parser=parser)


def _add_questions(sub):
    """``practice questions``: the interview questions on normalization (面试八股)."""
    p = _sub(sub, "questions", _("interview questions on normalization, answered with "
                                 "normcore's numbers"),
             _("The conceptual questions interviews ask about normalization, each with a short "
               "answer quoting what normcore measures, where normcore shows it, and the common "
               "wrong answers. In a terminal: a question at a time, the answer on Enter, then "
               "whether you knew it, recorded in the history (normcore practice history shows "
               "it); piped or redirected: every question printed with its answer."),
             ["normcore practice questions --random 5",
              "normcore practice questions --topic batchnorm,statistics --lang zh",
              "normcore practice questions bn-vs-ln-axes",
              "normcore practice questions --list > questions.txt"])
    p.add_argument("id", nargs="?", metavar="ID",
                   help=_("one question, by its id (normcore practice questions --list)"))
    p.add_argument("--topic", action="append", metavar="T",
                   help=_("only the questions of these topics, repeated or separated by commas "
                          "({topics}; e.g. --topic batchnorm,folding)").format(
                              topics=", ".join(questions.TOPICS)))
    p.add_argument("--random", type=_positive_int, metavar="N",
                   help=_("N questions drawn at random (e.g. --random 5)"))
    p.add_argument("--seed", type=seed, metavar="S",
                   help=_("seed the random draw, to draw the same questions again (default: a "
                          "fresh draw)"))
    p.add_argument("--list", action="store_true",
                   help=_("list the questions (id, topic, question) without their answers"))


def _add_timeout(parser):
    """--timeout SECONDS: the time limit of each probe on a file."""
    parser.add_argument("--timeout", type=positive_float, metavar="SECONDS", default=Limits.timeout,
                        help=_("stop a file whose probe runs longer than this many seconds "
                               "(default: {seconds:g}; e.g. --timeout 10)").format(
                                   seconds=Limits.timeout))


def _positive_int(text):
    """An integer >= 1, or argparse's clear error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(_("expected an integer >= 1, got {text!r}").format(
            text=text))
    return value


def _minutes(text):
    """--minutes: a positive number of minutes, or argparse's clear error."""
    try:
        return interview.check_minutes(text)
    except interview.InterviewError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def run(args):
    if args.action is None:
        args._parser.print_help()
        return 0
    return ACTIONS[args.action](args)
