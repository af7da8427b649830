"""The files ``normcore practice new NAME`` writes: a class to fill in, with its task and contract.

``skeleton(name, target)`` is the file for one exercise. With ``forward_only=True`` it is
derived from the same file, so that each skeleton exists once: the class loses its
``backward`` method, the contract its backward bullets, the worked example the lines that
call backward or read a gradient, and the task says that only the forward is asked; a
module-level ``FORWARD_ONLY = True`` tells ``normcore practice check`` to grade the forward
alone. With ``no_running_stats=True`` (BatchNorm, NumPy or PyTorch) it is derived the same way
as a training-only layer: no running statistics, no evaluation mode, the worked example's
lines about them gone, and ``NO_RUNNING_STATS = True`` tells the grader to leave their checks
out ("not written").

In Chinese (``normcore practice new NAME --lang zh``) the same file is written with its prose
translated (``translate``, by ``prose.translate`` as the reference answers are): each
paragraph, heading and bullet of its docstrings and each comment is one message of the
"practice" catalog (``messages`` lists them for ``python -m normcore.i18n update``); code, the
worked example's doctest and the identifiers stay as they are, so the file grades and runs
exactly as the English one.
"""

import ast
import doctest
import importlib.resources
import re
import textwrap
from pathlib import Path

from ...i18n import N_, language, translator
from ...i18n.width import display_width, wrap
from .. import answers, prose
from ..exercises import EXERCISES, RUNNING_STATISTICS

_ = translator("practice")

FILL_IN = "Fill in ``forward`` and ``backward`` (the TODOs)"
FORWARD_ONLY_TASK = "Fill in ``forward`` (the TODO)"
CACHE = "cache what backward needs"  # a TODO of the forward that the forward alone does not need
FORWARD_ONLY_NOTE = """
Forward only: this file asks for ``forward`` alone (``FORWARD_ONLY = True`` below). The
grader checks the forward's numbers and lists the backward's checks as "not asked". For
the backward too: ``normcore practice new {name}``.
"""
# the note as one message (translate looks it up so, whatever the exercise's name)
NOTE = N_("Forward only: this file asks for ``forward`` alone (``FORWARD_ONLY = True`` below). "
          "The grader checks the forward's numbers and lists the backward's checks as \"not "
          "asked\". For the backward too: ``normcore practice new {name}``.")
NOTE_OF = re.compile(re.escape(NOTE).replace(re.escape("{name}"), r"(?P<name>\w+)"))
FLAG_COMMENT = N_("normcore practice check grades the forward alone")
FORWARD_ONLY_FLAG = f"FORWARD_ONLY = True  # {FLAG_COMMENT}\n"
TITLE_ASKS = re.compile(r"forward and backward,|every gradient")  # what a title says is asked
BACKWARD_EXAMPLE = re.compile(r"backward|\.grad\b|\bd(y|x|loss)\b")  # a worked-example line of the backward
# a sentence of the task about the backward, and a formula line that asks for gradients
BACKWARD_PROSE = re.compile(r"\bbackward\b|\bgradients?\b|\bdL/d|\bdx\b")
BACKWARD_FORMULA = re.compile(r"^\s+(backward:|d\w*(, d\w*)*\s*= \?)")
UNBROKEN = re.compile(r"``.*?``|\([^()]*\)")  # code and a tuple: never broken across lines
SENTENCE = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+")


# the training-only version (``no_running_stats``): what the note and the flag say
TRAINING_ONLY_NOTE = N_("Training only: this file asks for BatchNorm in training alone, with "
                        "no running statistics and no evaluation mode (``NO_RUNNING_STATS = "
                        "True`` below). The grader checks the training numbers and lists the "
                        "checks of the running statistics and of evaluation as \"not written\". "
                        "For the whole layer: ``normcore practice new {name}``.")
RUNNING_FLAG_COMMENT = N_("normcore practice check leaves the running statistics out")
NO_RUNNING_STATS_FLAG = f"NO_RUNNING_STATS = True  # {RUNNING_FLAG_COMMENT}\n"
# the training-only version's edits of the text (pattern, new), of the NumPy or the PyTorch file
TRAINING_ONLY_EDITS = (
    (r"Practice: BatchNorm1d", "Practice: a training-only BatchNorm1d"),
    (r" in training and in evaluation\.", " in training."),
    (r",\s+running statistics over\s+several\s+steps,\s+eval mode\)", ")"),
    (r"; ``running_mean``,\s+``running_var``, ``num_batches_tracked``: buffers \(registered, "
     r"as PyTorch's are\)", ""),
    (r"which variance(?: where)?, (?:what momentum weights, )?where eps goes(?:, what momentum "
     r"weights)?\.", "which variance, where eps goes."),
    (r", momentum=0\.1, affine=True, track_running_stats=True(,|\))", r", affine=True\1"),
    (r"\(parameters, buffers and state_dict keys;", "(its parameters;"),
    (r"BatchNorm1d\(2, momentum=0\.1\)", "BatchNorm1d(2)"),
    (r"# TODO: training: the batch's mean and variance, and update the running statistics;\n"
     r"\s+#\s+evaluation: the running statistics\.", "# TODO: the batch's mean and variance."),
    (r"the mean and the\n(\s+)#\s+variance \(training\) or through x_hat only \(evaluation\)\.",
     r"the mean and the\n\1#       variance."),
    (r"# TODO: statistics over every dim but the channel dim \(in training\), or the running "
     r"ones\.\n(\s+)# TODO: in training, update the buffers \(how, so that autograd does not "
     r"follow\?\)\.", r"# TODO: the batch's statistics over every dim but the channel dim."),
)
RUNNING_LINE = re.compile(r"^\s*(self\.(running_mean|running_var|num_batches_tracked|momentum|"
                          r"track_running_stats|training) = |if track_running_stats:|"
                          r"self\.register_buffer\()")
RUNNING_EXAMPLE = re.compile(r"running_|num_batches|state_dict|\.eval\(\)")  # and all after eval


class NoForwardOnly(ValueError):
    """The exercise has no backward to leave out (a function, such as fold_batchnorm)."""


class NoTrainingOnly(ValueError):
    """The exercise has no running statistics to leave out (only BatchNorm has)."""


def skeleton(name, target="THIS_FILE.py", forward_only=False, torch=False, no_running_stats=False):
    """The text of exercise ``name``'s skeleton, as written to ``target``, in the language in
    use; with ``torch``, the PyTorch track's (a torch.nn.Module, forward only already); with
    ``no_running_stats``, the training-only version (BatchNorm)."""
    return translate(_english(name, forward_only, torch, no_running_stats),
                     names=_names(name, torch)).replace("THIS_FILE.py", str(target))


def _names(name, torch=False):
    """The identifiers of exercise ``name``'s reference answer: code its skeleton's formulas
    speak of (``hbn``, ``logits``), not prose to translate."""
    return prose.identifiers(answers.source(f"{'torch/' * torch}{name}"))


def _english(name, forward_only=False, torch=False, no_running_stats=False):
    key = f"torch/{name}" if torch else name
    text = importlib.resources.files(__name__).joinpath(f"{key}.py").read_text()
    if no_running_stats:
        text = _training_only(name, text)
    if forward_only and not torch:
        text = _forward_only(name, text)
    return text


def _training_only(name, text):
    """The training-only version of a BatchNorm skeleton ``text`` (NumPy or PyTorch): the task
    and the contract without the running statistics and evaluation, the class without its
    running statistics, ``train`` / ``eval`` and ``momentum``, the worked example without the
    lines that read them or switch to evaluation (and those after), the flag after the
    imports, the note after the title."""
    if name not in RUNNING_STATISTICS:
        raise NoTrainingOnly(_("{name} has no running statistics to leave out: only {names} "
                               "has a training-only version").format(
                                   name=name, names=", ".join(RUNNING_STATISTICS)))
    for pattern, new in TRAINING_ONLY_EDITS:
        text = re.sub(pattern, new, text, count=1)
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    drop = {n for n, line in enumerate(lines) if RUNNING_LINE.match(line)}
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "BatchNorm1d")
    for method in (n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in ("train", "eval")):
        drop |= _lines_of(method, lines)
    doc = ast.get_docstring(tree, clean=False)
    evaluated = False
    for example in doctest.DocTestParser().get_examples(doc):
        evaluated = evaluated or ".eval()" in example.source
        if evaluated or RUNNING_EXAMPLE.search(example.source):
            start = tree.body[0].lineno + example.lineno - 1
            drop.update(range(start, start + example.source.count("\n") + example.want.count("\n")))
    for number, line in enumerate(lines):  # the contract's bullets about evaluation
        if line.lstrip().startswith("- ") and "eval" in _bullet(lines, number):
            drop |= set(range(number, number + _bullet(lines, number).count("\n")))
    text = "".join(line for n, line in enumerate(lines) if n not in drop)
    last_import = max(n.end_lineno for n in ast.parse(text).body if isinstance(n, (ast.Import, ast.ImportFrom)))
    lines = text.splitlines(keepends=True)
    lines.insert(last_import, "\n" + NO_RUNNING_STATS_FLAG)
    title, rest = "".join(lines).split("\n\n", 1)
    note = textwrap.fill(TRAINING_ONLY_NOTE.format(name=name), LINE, break_long_words=False,
                         break_on_hyphens=False)
    return title + "\n\n" + note + "\n\n" + _refill(rest)


def _lines_of(node, lines):
    """The line numbers (from 0) of a method and of the blank lines before it."""
    drop = set(range(node.lineno - 1, node.end_lineno))
    first = node.lineno - 1
    while first > 0 and not lines[first - 1].strip():
        first -= 1
        drop.add(first)
    return drop


def _bullet(lines, number):
    """A contract bullet starting on line ``number``: its line and those continuing it."""
    indent = len(lines[number]) - len(lines[number].lstrip())
    end = number + 1
    while end < len(lines) and lines[end].strip() and len(lines[end]) - len(lines[end].lstrip()) > indent:
        end += 1
    return "".join(lines[number:end])


def _refill(text):
    """``text`` with the module docstring's paragraphs (those of unindented prose lines)
    filled again to LINE columns, where an edit made a line longer."""
    head, quotes, tail = text.partition('"""')
    paragraphs = head.split("\n\n")
    for i, paragraph in enumerate(paragraphs):
        lines = paragraph.split("\n")
        if any(len(line) > LINE for line in lines) and not any(line.startswith(" ") for line in lines):
            paragraphs[i] = textwrap.fill(" ".join(lines), LINE, break_long_words=False,
                                          break_on_hyphens=False)
    return "\n\n".join(paragraphs) + quotes + tail


def _forward_only(name, text):
    exercise = EXERCISES[name]
    if exercise.function:
        raise NoForwardOnly(_("{name} is a function with no backward: the whole exercise is its "
                              "forward, so it has no forward-only version (normcore practice new "
                              "{name} writes it)").format(name=name))
    tree = ast.parse(text)
    doc = ast.get_docstring(tree, clean=False)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == exercise.class_name)
    backward = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "backward")
    lines = text.splitlines(keepends=True)
    drop = set(range(backward.lineno - 1, backward.end_lineno))
    first = backward.lineno - 1
    while first > 0 and not lines[first - 1].strip():  # the blank lines before it go too
        first -= 1
        drop.add(first)
    for example in doctest.DocTestParser().get_examples(doc):  # the worked example's backward
        if BACKWARD_EXAMPLE.search(example.source):
            start = tree.body[0].lineno + example.lineno - 1  # the docstring opens on line 1
            size = example.source.count("\n") + example.want.count("\n")
            drop.update(range(start, start + size))
    bullet = None  # the indent of a contract bullet about backward: it and its continuation go
    for number, line in enumerate(lines):
        stripped, indent = line.strip(), len(line) - len(line.lstrip())
        if bullet is not None and (not stripped or indent <= bullet):
            bullet = None
        if stripped.startswith("- ``backward"):
            bullet = indent
        if bullet is not None or stripped == f"# TODO: {CACHE}.":
            drop.add(number)
    # the title is the docstring's first paragraph (one line or more)
    title, rest = "".join(line for n, line in enumerate(lines) if n not in drop).split("\n\n", 1)
    title = TITLE_ASKS.sub("the forward only,", title, count=1)
    rest = rest.replace(FILL_IN, FORWARD_ONLY_TASK, 1).replace(f"; {CACHE}.", ".")
    imports = "import numpy as np\n"
    rest = rest.replace(imports, imports + "\n" + FORWARD_ONLY_FLAG, 1)
    return title + "\n" + FORWARD_ONLY_NOTE.format(name=name) + "\n" + _forward_prose(rest)


def _forward_prose(text):
    """``text`` without what its docstrings say of the backward: the formula lines that ask
    for gradients (with the lines that continue them), and the sentences of its paragraphs
    that speak of the backward (the English says each in sentences of their own)."""
    kept, asking = [], None
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if asking is not None and line.strip() and indent > asking:
            continue  # a formula line asking for gradients goes on
        asking = indent if BACKWARD_FORMULA.match(line) else None
        if asking is None:
            kept.append(line)
    return "\n\n".join(_without_backward(p) for p in "\n".join(kept).split("\n\n"))


def _without_backward(paragraph):
    """A paragraph of prose (its heading and closing quotes kept) without its sentences about
    the backward, filled again; code, a bullet, an example or a paragraph with no such
    sentence as it is."""
    lines = paragraph.split("\n")
    head = lines[:2] if len(lines) > 2 and prose.HEADING.match(lines[1]) else []
    tail = lines[-1:] if lines[-1].strip() == '"""' else []
    body = lines[len(head):len(lines) - len(tail)]
    indents = {len(line) - len(line.lstrip()) for line in body}
    if (len(indents) != 1 or not BACKWARD_PROSE.search("\n".join(body))
            or ">>>" in paragraph or body[0].lstrip().startswith(("- ", "#"))):
        return paragraph
    sentences = SENTENCE.split(" ".join(" ".join(body).split()))
    kept = [s for s in sentences if not BACKWARD_PROSE.search(s)]
    if len(kept) == len(sentences):
        return paragraph
    indent = " " * indents.pop()
    text = UNBROKEN.sub(lambda m: m[0].replace(" ", "\0"), " ".join(kept))  # kept on one line
    filled = textwrap.wrap(text, LINE, initial_indent=indent, subsequent_indent=indent,
                           break_on_hyphens=False, break_long_words=False)
    return "\n".join(head + [line.replace("\0", " ") for line in filled] + tail)


def write(name, folder=".", force=False, forward_only=False, torch=False, no_running_stats=False):
    """Write exercise ``name``'s skeleton to FOLDER/my_NAME.py (my_NAME_torch.py for the
    PyTorch track) and return its path; raises FileExistsError when the file is there and
    ``force`` is not given, NoForwardOnly when the exercise has no forward-only version,
    NoTrainingOnly when ``no_running_stats`` asks for a training-only version it has not."""
    target = Path(folder) / f"my_{name}{'_torch' * torch}.py"
    if target.exists() and not force:
        raise FileExistsError(_("{target} already exists: not overwritten (use --force to "
                                "replace it)").format(target=target))
    text = skeleton(name, target, forward_only, torch, no_running_stats)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    return target


def what_to_fill(name, forward_only=False, torch=False):
    """What the candidate fills in: 'forward and backward', 'forward', or the function."""
    exercise = EXERCISES[name]
    if exercise.function:
        return exercise.class_name
    return N_("forward") if forward_only or torch else N_("forward and backward")


# --- the skeleton in the language in use ----------------------------------------------------------
def translate(text, lookup=None, names=()):
    """``text`` (a skeleton) with its prose in the language in use (``prose.translate``, with
    ``names`` as code); the forward-only note is one message, whatever the exercise's name."""
    if lookup is None:
        if language() == "en":
            return text
        lookup = _

    def look(message):
        note = NOTE_OF.fullmatch(message)
        if note is None and message == TRAINING_ONLY_NOTE.format(name="batchnorm"):
            return lookup(TRAINING_ONLY_NOTE).format(name="batchnorm")
        return lookup(NOTE).format(name=note["name"]) if note else lookup(message)

    return prose.translate(text, look, names)


LINE = prose.LINE


def messages():
    """Every message of every skeleton (each exercise's, its forward-only version's, the
    PyTorch track's and BatchNorm's training-only versions) with the file it comes from: what
    ``python -m normcore.i18n update`` extracts for the "practice" catalog."""
    from ..torch_track import EXERCISES as TORCH

    variants = [(name, False, False, False) for name in EXERCISES]
    variants += [(name, True, False, False) for name, e in EXERCISES.items() if not e.function]
    variants += [(name, False, True, False) for name in TORCH]
    variants += [(name, *both, True) for name in RUNNING_STATISTICS
                 for both in ((False, False), (True, False), (False, True))]
    found = []
    for name, forward_only, torch, no_running_stats in variants:
        where = f"normcore/practice/skeletons/{'torch/' * torch}{name}.py"

        def record(message, where=where):
            found.append((message, where))
            return message

        translate(_english(name, forward_only, torch, no_running_stats), record, _names(name, torch))
    return found
