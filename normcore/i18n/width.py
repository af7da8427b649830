"""Terminal widths that count display columns, not characters: a Chinese character (East Asian
Wide or Fullwidth) takes two columns. Every line normcore prints fits ``WIDTH`` display columns,
in either language; tables align by display width, and ``wrap`` breaks Chinese text between
characters (never before closing punctuation such as ，。）) as well as English text at spaces.

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
    '^' centred. Text already as wide or wider is returned unchanged."""
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
    """``text`` cut to at most ``width`` display columns (a wide character is never halved)."""
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


def _pieces(text):
    """Split ``text`` into unbreakable pieces and the spaces between them."""
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


def wrap(text, width=WIDTH, indent="", subsequent_indent=None):
    """``text`` as lines of at most ``width`` display columns. Spaces are collapsed as
    ``textwrap`` does; a piece wider than a line (a long path) is broken where it must be."""
    subsequent_indent = indent if subsequent_indent is None else subsequent_indent
    lines, line, prefix = [], "", indent
    for piece in _pieces(" ".join(str(text).split())):
        if piece.isspace():
            if line:
                line += " "
            continue
        if line and display_width(prefix + line + piece) > width:
            lines.append(prefix + line.rstrip())
            line, prefix = "", subsequent_indent
        while display_width(prefix + piece) > width and len(piece) > 1:  # too long for any line
            room = clip(piece, max(1, width - display_width(prefix)))
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
