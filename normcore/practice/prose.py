"""The prose of a practice file (a skeleton, a reference answer) in the language in use.

``translate(text)`` passes the English prose of a Python file through the "practice" catalog
and leaves its code as it is, so that the translated file compiles to the same program:

- each paragraph, heading and bullet of a docstring is one message;
- each line of a docstring's indented block (a formula, a derivation) that has English words
  in it is one message (a doctest, its output and a command stay as they are);
- each block of full-line comments is one message, and so is each comment after code, less
  its ``[tag]`` (the name the catalog of mistakes gives that line), which stays.

What is code is decided by ``has_prose``: a comment or a formula line made only of shapes,
identifiers of the file and formulas (``(N, C)``, ``x_hat``, ``max 0``) is no message.
``messages(text)`` lists the messages of a file, for ``python -m normcore.i18n update``.
"""

import ast
import doctest
import io
import re
import tokenize

from ..i18n import language, translator
from ..i18n.width import display_width, wrap

_ = translator("practice")

LINE = 88  # a translated paragraph is filled to this many display columns, as the English ones
HEADING = re.compile(r"^\s*(-+|=+)\s*$")
TODO = "TODO: "
TAG = re.compile(r"\s*\[[a-z0-9][a-z0-9-]*\]\s*$")  # "... [rstd]": a line's name for the catalog
CODE = re.compile(r"``.*?``")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# words of formulas, never prose, whatever the file's identifiers
MATH = {"sqrt", "exp", "log", "tanh", "mean", "max", "min", "sum", "var", "std", "eps", "softmax",
        "relu", "sigmoid", "abs", "float", "int", "dim", "dims", "axis", "axes", "True", "False",
        "None", "self", "np", "torch", "nn", "out"}  # out: a shape's name, (out, in)
# short words that are English, not code (a longer word is prose unless it is code)
SHORT = {"or", "of", "by", "to", "is", "at", "on", "as", "if", "no", "be", "it", "an"}
COMMAND = re.compile(r"^\s*(normcore|python|import|from)\b")  # a command or an import line


def translate(text, lookup=None, names=()):
    """``text`` (a Python file) with its docstrings' prose and its comments passed through
    ``lookup`` (default: the "practice" catalog in the language in use); what has no
    translation stays as it is (in English, all of it). ``names``: identifiers of code the
    file's formulas speak of besides its own (a skeleton's: its reference answer's)."""
    if lookup is None:
        if language() == "en":
            return text
        lookup = _
    names = identifiers(text) | set(names)
    lines = text.split("\n")
    for first, last, kind in reversed(_pieces(text)):
        translate_piece = {"doc": _docstring, "comment": _comment, "after": _after_code}[kind]
        lines[first:last] = translate_piece(lines[first:last], lookup, names)
    return "\n".join(lines)


def messages(text, names=()):
    """The messages of ``text`` that ``translate`` looks up, in order."""
    found = []

    def record(message):
        found.append(message)
        return message

    translate(text, record, names)
    return found


def identifiers(text):
    """The names a file's code and worked examples use (variables, attributes, functions,
    arguments, one-word strings such as ``"pre"``): words of a comment that are code, not
    prose."""
    names, tree = set(), ast.parse(text)
    examples = [ast.parse(e.source) for node in ast.walk(tree)
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
                and ast.get_docstring(node, clean=False)
                for e in doctest.DocTestParser().get_examples(ast.get_docstring(node, clean=False))]
    for node in (n for part in [tree] + examples for n in ast.walk(part)):
        for attr in ("id", "attr", "name", "arg", "value"):
            if isinstance(getattr(node, attr, None), str) and WORD.fullmatch(getattr(node, attr)):
                names.add(getattr(node, attr))
    return names


def has_prose(text, names=()):
    """Whether ``text`` (a comment, a formula line) has an English word that is not code: a
    short English word ("or") or a word of three letters or more that is no identifier of the
    file and no formula's word; ``double-backquoted`` code and a trailing ``[tag]`` do not
    count."""
    text = TAG.sub("", CODE.sub("", text))
    return any(w in SHORT or len(w) >= 3 and w.isalpha() and w not in names and w not in MATH
               and not (w.startswith("d") and w[1:] in names)  # a gradient's name: dloss
               for w in WORD.findall(text))


def _pieces(text):
    """(first line, end line, kind) of every docstring ("doc"), full-line comment block
    ("comment") and comment after code with its continuation lines ("after") of ``text``, in
    order (line numbers from 0)."""
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            found.append((body[0].lineno - 1, body[0].end_lineno, "doc"))
    inside = {n for first, last, _kind in found for n in range(first, last)}
    lines = text.split("\n")
    after = {t.start[0] - 1: t.start[1] for t in tokenize.generate_tokens(io.StringIO(text).readline)
             if t.type == tokenize.COMMENT and t.line[:t.start[1]].strip()}
    n = 0
    while n < len(lines):
        column = len(lines[n]) - len(lines[n].lstrip())
        if n in after:  # a comment after code, and the comment lines under it
            end = n + 1
            while end < len(lines) and lines[end].lstrip().startswith("#") \
                    and lines[end].index("#") == after[n]:
                end += 1
            found.append((n, end, "after"))
            n = end
            continue
        if n in inside or not lines[n].lstrip().startswith("#"):
            n += 1
            continue
        end = n + 1
        while (end < len(lines) and lines[end].lstrip().startswith("#")
               and len(lines[end]) - len(lines[end].lstrip()) == column
               and not (lines[end].lstrip().startswith("# " + TODO)  # a new TODO, unless
                        and lines[end - 1].rstrip().endswith((".", "?", "!")))):  # one goes on
            end += 1
        found.append((n, end, "comment"))
        n = end
    return sorted(found)


def _comment(block, lookup, names=()):
    """A block of comment lines, translated as one message and filled again."""
    indent = block[0][:len(block[0]) - len(block[0].lstrip())]
    text = " ".join(line.strip().lstrip("#").strip().removeprefix(TODO * (n > 0))
                    for n, line in enumerate(block))
    todo = text.startswith(TODO)
    message = text[len(TODO):] if todo else text
    if not has_prose(message, names):
        return block
    translated = lookup(message)
    if translated == message:
        return block
    first = "# " + (TODO if todo else "")
    return _fill(translated, indent + first, indent + "#" + " " * (len(first) - 1))


def _after_code(block, lookup, names=(), fill=True):
    """A comment after code (and the comment lines under it), translated as one message; its
    ``[tag]`` stays at its end. A comment of one line stays on its line (as wide as the
    English one allows); not ``fill``: always (a doctest's line cannot go on as a comment)."""
    code = block[0][:_comment_column(block[0].removesuffix('"""'))]
    text = " ".join(line[len(code):].strip().lstrip("#").strip() if n == 0
                    else line.strip().lstrip("#").strip() for n, line in enumerate(block))
    tag = TAG.search(text)
    message = text[:tag.start()] if tag else text
    if not has_prose(message, names):
        return block
    translated = lookup(message)
    if translated == message:
        return block
    tail = tag[0] if tag else ""
    if not fill or len(block) == 1:  # on its line, as the English (the tag stays on it)
        return [code + "# " + translated + tail]
    return _fill(translated + tail, code + "# ", " " * len(code) + "# ")


def _fill(text, indent, subsequent_indent):
    """``text`` filled to LINE display columns, without a last line of a word or two: a
    Chinese sentence may break between any two characters, and "参考答" / "案" reads badly."""
    for width in range(LINE, LINE - 12, -2):
        lines = wrap(text, width, indent=indent, subsequent_indent=subsequent_indent)
        last = lines[-1][len(subsequent_indent):]
        if len(lines) == 1 or display_width(last) > 6:
            return lines
    return wrap(text, LINE, indent=indent, subsequent_indent=subsequent_indent)


def _comment_column(line):
    """Where the comment after the code of ``line`` begins, or None (the line may be part of a
    longer statement or a doctest: only its tokens up to the comment are read)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(line.lstrip()).readline):
            if token.type == tokenize.COMMENT:
                return len(line) - len(line.lstrip()) + token.start[1]
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                return None
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return None


def _code_lines(block, example, lookup, names=()):
    """Lines of a docstring's indented block: the comments after their code translated
    (``_after_code``), a formula's line with prose translated whole (``_formula``), a doctest
    and its output kept (``example``: whether each line belongs to one)."""
    out, n = [], 0
    while n < len(block):
        column = _comment_column(block[n])
        if column is None or not block[n][:column].strip():
            out.append(block[n] if example[n] else _formula(block[n], lookup, names))
            n += 1
            continue
        end = n + 1
        while end < len(block) and block[end].lstrip().startswith("#") \
                and block[end].index("#") == column:
            end += 1
        out += _after_code(block[n:end], lookup, names, fill=not example[n])
        n = end
    return out


def _docstring(block, lookup, names=()):
    """A docstring's lines (the quotes included) with its prose translated: paragraphs,
    headings (underlined again to their new width), bullets, and the lines of its indented
    blocks that have prose; a worked example (a doctest and its output) kept."""
    opening = block[0].index('"""') + 3
    head, block = block[0][:opening], [block[0][opening:]] + block[1:]
    rest = [line for line in block[1:] if line.strip()]
    base = min((len(line) - len(line.lstrip()) for line in rest), default=0)
    out, paragraph, code = [], [], []  # code: (line, whether it belongs to a doctest)
    example = False  # inside a doctest: its source and its expected output

    def flush():
        if paragraph:
            first = opening if paragraph[0] is block[0] else 0
            out.extend(_paragraph(paragraph, base, first, lookup))
            paragraph.clear()
        if code:
            out.extend(_code_lines([c[0] for c in code], [c[1] for c in code], lookup, names))
            code.clear()

    for n, line in enumerate(block):
        margin = len(line) - len(line.lstrip())
        example = bool(line.strip()) and (example or line.lstrip().startswith(">>>"))
        if not line.strip() or line.strip() == '"""':
            flush()
            out.append(line)
        elif n and (example or margin > base and not paragraph):
            if paragraph:
                flush()
            code.append((line, example))  # an example, a command, a formula
        else:
            if code or paragraph and line.lstrip().startswith("- ") and margin == base:
                flush()  # the code before it, or the bullet before it
            paragraph.append(line)
            if len(paragraph) == 2 and HEADING.match(line):
                flush()  # a heading: its own message
    flush()
    out[0] = head + out[0]
    return out


def _formula(line, lookup, names=()):
    """A line of a docstring's indented block: translated as one message when it has prose
    (a formula's English note, a derivation's step), kept when it is code or a command."""
    closes = line.rstrip().endswith('"""')
    text = line.strip().removesuffix('"""').rstrip()
    if COMMAND.match(text) or _parses(text) or not has_prose(text, names):
        return line
    translated = lookup(text)
    if translated == text:
        return line
    indent = line[:len(line) - len(line.lstrip())]
    return indent + translated + '"""' * closes


def _parses(text):
    """Whether ``text`` is a line of Python (then it is code, whatever its words)."""
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def _paragraph(lines, base, offset, lookup):
    """One paragraph, heading or bullet, translated and filled again (unchanged when it has no
    translation). ``offset``: the columns the opening quotes take on the first line."""
    indent = " " * base
    if len(lines) == 2 and HEADING.match(lines[1]):  # a heading and its underline
        title = lines[0].strip()
        translated = lookup(title)
        if translated == title:
            return lines
        return [indent + translated, indent + lines[1].strip()[0] * display_width(translated)]
    closes = lines[-1].rstrip().endswith('"""')  # a docstring that closes on its last line
    text = " ".join(line.strip() for line in lines)
    text = text[:-3].rstrip() if closes else text
    bullet = text.startswith("- ")
    message = text[2:] if bullet else text
    translated = lookup(message)
    if translated == message:
        return lines
    first = " " * offset if offset else indent + ("- " if bullet else "")
    filled = _fill(translated, first, indent + "  " * bullet)
    if offset:
        filled[0] = filled[0][offset:]
    if closes:
        filled[-1] += '"""'
    return filled
