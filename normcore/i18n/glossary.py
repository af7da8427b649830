"""The glossary (术语表, ``glossary.toml``): one Chinese term for each English one, used by every
translation. ``missing_terms(english, chinese)`` is what the catalogs' test checks each
translated message with: a message that uses a glossary term in English uses its Chinese term.
"""

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "glossary.toml"


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    d2l: str = ""  # d2l's Chinese edition's term, where it differs
    note: str = ""
    note_zh: str = ""  # the note in Chinese: the glossary page (术语表) shows it

    @property
    def pattern(self):
        """The English term as a word, with its inflections (normalised, standardises, masks)."""
        words = r"[\s-]+".join(map(re.escape, self.en.split()))
        # not inside code: x.mean(, mean_D, running_mean are identifiers, not the word
        return re.compile(rf"(?<![\w.]){words}(?:s|es|d|ed|ing|ation|ations)?(?![\w(])", re.IGNORECASE)


@lru_cache(maxsize=1)
def terms():
    """Every glossary term, in the file's order."""
    with open(PATH, "rb") as f:
        return tuple(Term(**entry) for entry in tomllib.load(f)["term"])


def missing_terms(english, chinese):
    """The terms ``english`` uses whose Chinese term ``chinese`` lacks. Placeholders such as
    {name}, code in backquotes, a title in double quotes (a paper's, kept as published) and
    example command lines (a line beginning "normcore ...") are not words of the message, and
    a term inside a longer one is that term's ("internal covariate shift" asks for
    内部协变量偏移, not for shift's 平移)."""
    prose = re.sub(r'\{[^}]*\}|`[^`]*`|"[^"]*"', " ", english)
    # an example's command line: a line that begins with it, up to two spaces or the line's end
    prose = re.sub(r"(?m)^\s*normcore\b.*?(?=\s{2,}|$)", " ", prose)
    missing = []
    for t in sorted(terms(), key=lambda t: -len(t.en)):  # the longest terms first
        if t.pattern.search(prose):
            if t.zh not in chinese:
                missing.append(t)
            prose = t.pattern.sub(" ", prose)
    return sorted(missing, key=terms().index)
