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
    """The terms ``english`` uses whose Chinese term ``chinese`` lacks (placeholders such as
    {name} and code in backquotes are not words of the message)."""
    prose = re.sub(r"\{[^}]*\}|`[^`]*`", " ", english)
    return [t for t in terms() if t.pattern.search(prose) and t.zh not in chinese]
