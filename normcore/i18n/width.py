"""Terminal widths that count display columns, not characters: a Chinese character (East Asian
Wide or Fullwidth) takes two columns. Every line normcore prints fits ``WIDTH`` display columns,
in either language; tables align by display width, and ``wrap`` breaks English text at spaces
and Chinese text between characters, but never before closing punctuation such as ，。）, never
inside a short Chinese phrase (up to ``SHORT_PHRASE`` characters between spaces, code and
punctuation: a label such as "running_var 推理前向后" breaks at its space), never leaving one
character of a longer phrase alone on a line, and never inside a short tuple or formula
("(T, D)", "0 <= p < 1").

    display_width("批量归一化 BN")      # 13
    pad("层归一化", 10)                 # '层归一化  ' (8 columns + 2 spaces)
    wrap("...", 80, indent="  ")       # a list of lines, none wider than 80 columns
"""

import re
import unicodedata

WIDTH = 80  # the terminal normcore writes for

# no line may begin with these (closing punctuation, in Chinese and ASCII)
_NO_BREAK_BEFORE = set("，。、；：？！）》」』】〉”’…,.;:?!)]}%")
# no line may end with these (opening punctuation)
_NO_BREAK_AFTER = set("（《「『【〈“‘([{")


def char_width(ch):
    """2 for a wide or fullwidth character, 0 for a combining mark, else 1."""
    if unicodedata.combining(ch):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text):
    """The columns ``text`` takes in a terminal (one line)."""
    return sum(char_width(ch) for ch in str(text))


def pad(text, width, align="<"):
    """``text`` padded with spaces to ``width`` display columns: align '<' left, '>' right,
    '^' centred, the odd space (when the room left is odd) on the right, as ``format``'s '^'
    puts it: ``pad("ab", 5, "^")`` is ``" ab  "``. Text already as wide or wider is returned
    unchanged."""
    text = str(text)
    room = width - display_width(text)
    if room <= 0:
        return text
    if align == ">":
        return " " * room + text
    if align == "^":
        return " " * (room // 2) + text + " " * (room - room // 2)
    if align == "<":
        return text + " " * room
    raise ValueError(f"align must be '<', '>' or '^', got {align!r}")


def clip(text, width):
    """``text`` cut to exactly ``width`` display columns (unchanged when it is no wider). A
    wide character is never halved: when the cut falls inside one, that character is left out
    and the result is ``width - 1`` columns (``clip("层归一化", 5)`` is ``"层归"``); pad it
    where a fixed width is needed."""
    out, used = [], 0
    for ch in str(text):
        used += char_width(ch)
        if used > width:
            break
        out.append(ch)
    return "".join(out)


def _is_wide(ch):
    return char_width(ch) == 2


# the pieces a line may break between: a run of spaces, a wide character (with the closing
# punctuation that must stay with it), or a run of narrow non-space characters (a word)
_PIECE = re.compile(r"\s+|[^\s]")
# a token of a formula: a line never breaks beside it, so that "0 <= p < 1" stays whole
_OPERATORS = {"=", "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "//", "**", "@", "->",
              "+=", "-=", "*=", "/="}
SHORT_PHRASE = 6   # Chinese characters: a run this short between spaces, code and punctuation
                   # is a phrase, kept on one line ("推理前向后" never becomes "推理前" / "向后")
MAX_GLUED = 24     # display columns: a tuple or formula up to this wide is kept on one line


def _pieces(text):
    """Split ``text`` into pieces (a word, a wide character with its punctuation) and the
    spaces between them."""
    pieces = []
    for ch in _PIECE.findall(text):
        glue = pieces and not pieces[-1].isspace() and not ch.isspace() and (
            ch in _NO_BREAK_BEFORE or pieces[-1][-1] in _NO_BREAK_AFTER
            or not (_is_wide(ch) or _is_wide(pieces[-1][-1])))
        if glue:  # a narrow character continues a word; punctuation stays with its neighbour
            pieces[-1] += ch
        else:
            pieces.append(ch)
    return pieces


def _phrases(pieces, room):
    """``pieces`` with each run of wide characters (a Chinese phrase, from punctuation or a
    space or a word to the next) made one piece if it is short (and fits in ``room`` columns),
    else with its first two and last two characters joined, so that no line begins or ends
    with one character of it."""
    out, run = [], []

    def close():
        if len(run) <= SHORT_PHRASE and display_width("".join(run)) <= room:
            out.extend(["".join(run)] if run else [])
        elif len(run) < 4:  # too wide for the line: it breaks where it must
            out.extend(run)
        else:
            out.extend(["".join(run[:2]), *run[2:-2], "".join(run[-2:])])
        run.clear()

    for piece in pieces:
        wide = any(map(_is_wide, piece))  # "“未": an opening quote (narrow) with its character
        if piece.isspace() or not wide or piece[0] in _NO_BREAK_AFTER:
            close()
        if piece.isspace() or not wide:
            out.append(piece)
            continue
        run.append(piece)
        if piece[-1] in _NO_BREAK_BEFORE and _is_wide(piece[-1]):  # a phrase ends at ，。：
            close()
    close()
    return out


_NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _units(text, room):
    """The pieces of ``text`` that ``wrap`` never breaks, and single spaces between them where
    a line may break: a word, a Chinese phrase, and a short tuple or formula whose spaces are
    inside ASCII brackets or beside an operator ("(T, D)", "0 <= p < 1"), and a number with the
    Chinese word it counts ("3 维", "9 个值"); none of the phrases,
    tuples or formulas wider than ``room`` columns (a line's)."""
    pieces = _phrases(_pieces(text), room)
    groups, depth, previous = [[]], 0, None
    for piece in pieces:
        if piece.isspace():
            groups[-1].append(piece)
            continue
        spaced = bool(groups[-1]) and groups[-1][-1].isspace()
        counted = previous is not None and _NUMBER.fullmatch(previous) and _is_wide(piece[0])  # "3 维"
        if spaced and not (depth > 0 or piece in _OPERATORS or previous in _OPERATORS or counted):
            groups += [[groups[-1].pop()], []]  # a space where the line may break
        elif not spaced and groups[-1]:
            groups.append([])  # pieces side by side (Chinese): the line may break between them
        groups[-1].append(piece)
        if not _is_wide(piece[0]):
            depth = max(0, depth + sum(piece.count(c) for c in "([{") - sum(piece.count(c) for c in ")]}"))
        previous = piece
    units = []
    for group in groups:
        if display_width("".join(group)) <= min(MAX_GLUED, room) or len(group) == 1:
            units.append("".join(group))
        else:  # too long to keep together: it breaks at its spaces like prose
            units.extend(group)
    return [unit for unit in units if unit]


def wrap(text, width=WIDTH, indent="", subsequent_indent=None):
    """``text`` as lines of at most ``width`` display columns, each filled with as many pieces
    as fit, up to exactly ``width`` (the indent counted). Spaces are collapsed as ``textwrap``
    does; a piece wider than a line (a long path) is broken where it must be."""
    subsequent_indent = indent if subsequent_indent is None else subsequent_indent
    lines, line, prefix = [], "", indent
    room = width - max(display_width(indent), display_width(subsequent_indent))
    for piece in _units(" ".join(str(text).split()), room):
        if piece.isspace():
            if line:
                line += " "
            continue
        if line and display_width(prefix + line + piece) > width:
            lines.append(prefix + line.rstrip())
            line, prefix = "", subsequent_indent
        while display_width(prefix + piece) > width and len(piece) > 1:  # too long for any line
            # at least one character, or a wide one would never fit a one-column line
            room = clip(piece, max(1, width - display_width(prefix))) or piece[0]
            lines.append(prefix + room)
            piece, prefix = piece[len(room):], subsequent_indent
        line += piece
    if line or not lines:
        lines.append(prefix + line.rstrip())
    return lines


def fill(text, width=WIDTH, indent="", subsequent_indent=None):
    """``wrap`` joined into one string."""
    return "\n".join(wrap(text, width, indent, subsequent_indent))


def join_wide_lines(markdown):
    """Markdown with a paragraph's lines joined where one ends and the next begins with a wide
    (Chinese) character: a line break inside a paragraph is a space in HTML, and a space between
    two Chinese characters is a gap a reader sees. Code blocks (``` fences) are left alone."""
    lines, fenced = [], False
    for line in markdown.split("\n"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif (not fenced and lines and line.strip() and lines[-1].strip()
              and _is_wide(line.lstrip()[0]) and _is_wide(lines[-1].rstrip()[-1])):
            lines[-1] = lines[-1].rstrip() + line.lstrip()
            continue
        lines.append(line)
    return "\n".join(lines)
