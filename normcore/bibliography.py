"""normcore's one bibliography: every paper, model and codebase its material names.

The entries are in ``normcore/bibliography.toml``; each has a ``key``, its ``authors``, ``year``,
``title``, ``venue``, an ``arxiv`` id or a ``url`` (a codebase: its repository and the ``files``
that matter), the ``aliases`` under which the material names it (``"DyT paper"``, ``"OLMo 2"``)
and a note on what it ``supports`` in normcore's material.

    >>> from normcore import bibliography
    >>> bibliography.resolve("Zhang & Sennrich 2019").key
    'zhang2019rmsnorm'
    >>> [e.key for e in bibliography.cited_in("Pre-LN (Xiong et al. 2020) and ViT-22B")]
    ['xiong2020layer', 'dehghani2023vit22b']

A citation is found in a text in one of three forms (:func:`citations`):

* author and year: ``Name et al. 2020``, ``Name et al. (2020)``, ``(Name, 2020)``,
  ``Name & Name 2019``, ``Name and Name, 2019``, ``Name, Name and Name, 2025``,
  ``Name et al., CVPR 2025``, and in Chinese ``Name 等（2020）``, ``Name 等人（2020）``,
  ``Name 和 Name 2015``, ``Name、Name 和 Name 2019``. It resolves to the entry whose first
  author's surname and year are the citation's, whose other authors include every further
  name the citation gives, and whose number of authors fits (``et al.``: three or more; two
  names and no ``et al.``: exactly two);
* ``Name et al.`` with no year: the one entry whose first author is Name (with two co-authors
  or more), or, when several are, the one the same text cited last under that name;
* an arXiv id, ``arXiv:2503.10622`` or ``arxiv.org/abs/2503.10622``;
* an alias or the title (of three words or more) of an entry, whole words, case and spelling
  as declared.

An alias is matched before the author-year forms, so that an alias that is itself a citation
(``"Zhang et al. 2019"``, where two entries would fit) decides which entry it is.
"""

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

__all__ = ["Entry", "Citation", "entries", "entry", "resolve", "citations", "cited_in",
           "markdown", "notebook_references", "read_text"]

PATH = Path(__file__).with_name("bibliography.toml")
KINDS = ("paper", "model", "code")
# a word that makes an author an organisation, cited by its whole name
ORGANISATION = frozenset({"Team", "contributors"})

# A surname: capitalised, a prefix's capital allowed (LeCun, McCandlish), hyphenated parts
# allowed, a whole word (not the start of DeepNet).
_NAME = r"(?:Mc|Mac|Le|La|De|Di|Du|Van|Von)?[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?![A-Za-z])"
_SEP = r"(?:,\s*|\s+and\s+|\s*&\s*|\s*、\s*|\s*和\s*)"
_ET_AL = r"(?P<etal>\s+et\s+al\.?|\s*等人?)"
_YEAR = r"(?P<year>(?:19|20)\d\d)(?![\d.])"
# between the names and the year: a comma or a space, an opening bracket, a venue (CVPR)
_GAP = r"(?:,\s*|\s*[(（]\s*|\s+)(?:[A-Z][A-Za-z]+\s+)?"
AUTHOR_YEAR = re.compile(rf"(?<![A-Za-z0-9_-])(?P<names>{_NAME}(?:{_SEP}{_NAME})*){_ET_AL}?{_GAP}{_YEAR}")
# "Name et al." with no year: the one entry it fits, or the one cited last under that name
ET_AL_ALONE = re.compile(rf"(?<![A-Za-z0-9_-])(?P<name>{_NAME})\s+et\s+al\.")
ARXIV = re.compile(r"(?:arXiv:?\s*|arxiv\.org/(?:abs|pdf)/)(?P<id>\d{4}\.\d{4,5})", re.IGNORECASE)
# Capitalised words that stand before a year without being an author ("Since 2020").
NOT_NAMES = frozenset({
    "Since", "In", "From", "Until", "After", "Before", "By", "Of", "The", "And", "As", "At",
    "Up", "To", "On", "Through", "Around", "Early", "Late", "Mid", "About", "Circa", "Version",
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December", "Step", "Steps", "Epoch", "Layer", "Layers", "Block",
    "Blocks", "Seed", "Row", "Rows", "Table", "Figure", "Section", "Claim",
})


@dataclass(frozen=True)
class Entry:
    """One paper, model or codebase of the bibliography (the fields of its TOML table)."""

    key: str
    kind: str
    authors: tuple
    year: int
    title: str
    venue: str
    supports: str
    arxiv: str = ""
    url: str = ""
    files: tuple = ()
    aliases: tuple = ()
    name_only: bool = False  # cited by its aliases only: its author-year is another entry's

    @property
    def surnames(self):
        """Each author's surname: the last word of the name, or an organisation's whole name
        ("Team OLMo", "PyTorch contributors"; "OpenAI" is one word either way)."""
        return tuple(name if ORGANISATION.intersection(name.split()) else name.split()[-1]
                     for name in self.authors)

    @property
    def link(self):
        """The arXiv abstract page, else the URL."""
        return f"https://arxiv.org/abs/{self.arxiv}" if self.arxiv else self.url

    def short(self):
        """``Zhang & Sennrich 2019``, ``Xiong et al. 2020``, ``Team OLMo 2024``."""
        names = self.surnames
        if len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} & {names[1]}"
        else:
            who = f"{names[0]} et al."
        return f"{who} {self.year}"


@dataclass(frozen=True)
class Citation:
    """A citation found in a text: its ``text``, where it ``start``s, and its ``entry`` (None
    when no entry fits, or when two do)."""

    text: str
    start: int
    entry: Entry | None = field(default=None, compare=False)


def _entry(table):
    missing = {"key", "kind", "authors", "year", "title", "venue", "supports"} - set(table)
    if missing:
        raise ValueError(f"{PATH.name}: entry {table.get('key', '?')!r} lacks {sorted(missing)}")
    if table["kind"] not in KINDS:
        raise ValueError(f"{PATH.name}: entry {table['key']!r} has kind {table['kind']!r}, "
                         f"expected one of {KINDS}")
    if not (table.get("arxiv") or table.get("url")):
        raise ValueError(f"{PATH.name}: entry {table['key']!r} has neither an arxiv id nor a url")
    fields = dict(table)
    for name in ("authors", "files", "aliases"):
        fields[name] = tuple(fields.get(name, ()))
    return Entry(**fields)


@cache
def entries():
    """Every entry of ``bibliography.toml``, in its order."""
    with PATH.open("rb") as f:
        tables = tomllib.load(f)["entry"]
    out = tuple(_entry(t) for t in tables)
    keys = [e.key for e in out]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"{PATH.name}: keys used twice: {twice}")
    return out


def entry(key):
    """The entry with this key; KeyError naming the keys there are if there is none."""
    for e in entries():
        if e.key == key:
            return e
    raise KeyError(f"no bibliography entry {key!r}; the keys are {[e.key for e in entries()]}")


@cache
def _alias_pattern():
    """Every alias, and every title of three words or more (a shorter one, such as "Layer
    Normalization", is also a phrase of prose), longest first (ViT-22B before ViT), as whole
    words."""
    names = {}
    for e in entries():
        titles = (e.title,) if len(e.title.split()) >= 3 else ()
        for name in (*e.aliases, *titles):
            names.setdefault(name, e)
    ordered = sorted(names, key=len, reverse=True)
    pattern = "|".join(re.escape(n) for n in ordered)
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:{pattern})(?![A-Za-z0-9_]|-[A-Za-z0-9])"), names


def _by_authors(match):
    """The one entry an author-year match fits, or None."""
    names = re.split(_SEP, match["names"])
    et_al, year = bool(match["etal"]), int(match["year"])
    fits = [e for e in entries() if not e.name_only and e.year == year and e.surnames[0] == names[0]
            and set(names[1:]) <= set(e.surnames[1:])
            and (len(e.authors) >= 3 if et_al else len(names) == 1 or len(e.authors) == len(names))]
    return fits[0] if len(fits) == 1 else None


def citations(text):
    """Every citation in ``text`` (aliases and titles, arXiv ids, author-year), in the order
    they occur, each with the entry it resolves to (None: no entry, or more than one, fits)."""
    found = []
    pattern, names = _alias_pattern()
    for m in pattern.finditer(text):
        found.append(Citation(m.group(0), m.start(), names[m.group(0)]))
    masked = pattern.sub(lambda m: " " * len(m.group(0)), text)
    arxiv = {e.arxiv: e for e in entries() if e.arxiv}
    for m in ARXIV.finditer(masked):
        found.append(Citation(m.group(0), m.start(), arxiv.get(m["id"])))
    for m in AUTHOR_YEAR.finditer(masked):
        first = re.split(_SEP, m["names"])[0]
        if first in NOT_NAMES:
            continue
        found.append(Citation(m.group(0), m.start(), _by_authors(m)))
    masked = AUTHOR_YEAR.sub(lambda m: " " * len(m.group(0)), masked)
    for m in ET_AL_ALONE.finditer(masked):
        found.append(Citation(m.group(0), m.start(), _by_name(m["name"], m.start(), found)))
    return sorted(found, key=lambda c: c.start)


def _by_name(name, start, found):
    """The entry a year-less "Name et al." names: the one entry whose first author is Name with
    two co-authors or more, else the entry cited last before it under that name, else None."""
    fits = [e for e in entries() if e.surnames[0] == name and len(e.authors) >= 3]
    if len(fits) == 1:
        return fits[0]
    earlier = [c for c in sorted(found, key=lambda c: c.start) if c.start < start and c.entry
               and c.entry.surnames[0] == name]
    return earlier[-1].entry if earlier else None


def resolve(text):
    """The entry that the citation ``text`` names (an alias, a title, an arXiv id or an
    author-year citation); LookupError if none or several fit."""
    found = citations(text)
    if not found or any(c.entry is None for c in found) or len({c.entry.key for c in found}) > 1:
        raise LookupError(f"{text!r} names no single bibliography entry"
                          + (f" (found {[c.text for c in found]})" if found else ""))
    return found[0].entry


def cited_in(text):
    """The entries ``text`` cites, once each, in the order of their first citation."""
    seen = {}
    for c in citations(text):
        if c.entry is not None:
            seen.setdefault(c.entry.key, c.entry)
    return list(seen.values())


WORDS = {
    "en": {"title": "References", "paper": "Papers", "model": "Models",
           "code": "Codebases", "files": "files", "supports": "In normcore: "},
    "zh": {"title": "参考文献", "paper": "论文", "model": "模型",
           "code": "代码库", "files": "文件", "supports": "在 normcore 中："},
}


def _escape(text):
    """Text as literal Markdown: one line, every markup character escaped."""
    text = " ".join(str(text).split())
    for char in "\\`*_[]<>$|":
        text = text.replace(char, "\\" + char)
    return text


def _item(e, words, notes):
    """One entry as a Markdown list item: who, what, where, and what it supports."""
    authors = _escape(", ".join(e.authors)).removesuffix(".")
    where = "; ".join(f"<{link}>" for link in dict.fromkeys((e.link, e.url or e.link)))
    files = f"; {words['files']}: " + ", ".join(f"`{f}`" for f in e.files) if e.files else ""
    alias = f" ({_escape(', '.join(e.aliases))})" if e.aliases else ""
    year = "" if str(e.year) in e.venue else f", {e.year}"
    line = (f"- **{_escape(e.short())}**{alias}. {authors}. *{_escape(e.title)}*. "
            f"{_escape(e.venue)}{year}. {where}{files}.")
    if notes:
        line += f"  \n  {words['supports']}{_escape(e.supports)}"
    return line


def markdown(selected=None, lang="en", level=1, notes=True):
    """The bibliography (or the ``selected`` entries or keys) as Markdown, grouped by kind
    (papers, models, codebases) under headings in ``lang`` ("en" or "zh"); ``level``: the
    title's heading level; ``notes``: each entry's note on what it supports."""
    if lang not in WORDS:
        raise ValueError(f"lang must be one of {sorted(WORDS)}, got {lang!r}")
    words = WORDS[lang]
    chosen = entries() if selected is None else [s if isinstance(s, Entry) else entry(s)
                                                 for s in selected]
    lines = [f"{'#' * level} {words['title']}", ""]
    for kind in KINDS:
        group = sorted((e for e in chosen if e.kind == kind), key=lambda e: (e.short(), e.key))
        if group:
            lines += [f"{'#' * (level + 1)} {words[kind]}", ""]
            lines += [_item(e, words, notes) for e in group] + [""]
    return "\n".join(lines)


# a string literal continued on the next line: "... (Zagoruyko "\n  "& Komodakis 2016)"
_CONTINUED = re.compile(r'(?<!\\)["\']\s*\n\s*[rfbu]{0,2}["\']')


def read_text(path):
    """A file's text as a reader sees it: in Python sources and message catalogs, a string
    continued on the next line is joined, so that a citation split across lines is whole."""
    text = Path(path).read_text(encoding="utf-8")
    return _CONTINUED.sub("", text) if Path(path).suffix in (".py", ".po") else text


def notebook_references(source, lang="en"):
    """A notebook's references cell: the entries its source file (a path) cites, as Markdown."""
    return markdown(cited_in(read_text(source)), lang=lang, level=2, notes=False)
