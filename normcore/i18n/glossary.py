"""The glossary (术语表, ``glossary.toml``): one Chinese term for each English one, used by every
translation. The catalogs' tests check each translated message with two functions:

- ``missing_terms(english, chinese)``: a message that uses a glossary term in English uses its
  Chinese term;
- ``added_glosses(english, chinese)``: a translation adds no parenthesised gloss, such as
  "（反向）" after backward, that its English does not have;

and ``avoided_terms(chinese)`` finds the words the glossary rejects (``avoid``: 评估模式 where
the glossary says 推理模式).
"""

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).resolve().parent / "glossary.toml"


def _plural(word):
    """A noun's plural: gradient -> gradients, batch -> batches, probability -> probabilities."""
    if re.search(r"[^aeiou]y$", word):
        return word[:-1] + "ies"
    return word + ("es" if re.search(r"(?:s|x|ch|sh)$", word) else "s")


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    d2l: str = ""  # d2l's Chinese edition's term, where it differs
    note: str = ""
    note_zh: str = ""  # the note in Chinese: the glossary page (术语表) shows it
    # the English words that are this term: a noun's singular and plural unless the glossary
    # lists them (a verb's inflections; a word whose plural is another word, as "means" is)
    forms: tuple = ()
    avoid: tuple = ()  # Chinese words for the same concept that no translation uses
    method: bool = False  # also a method's name (layer.forward): Chinese may keep it as code

    def __post_init__(self):
        object.__setattr__(self, "forms", tuple(self.forms))
        object.__setattr__(self, "avoid", tuple(self.avoid))

    @property
    def words(self):
        """The English forms this term matches: ``forms``, else the term and its plural."""
        if self.forms:
            return self.forms
        head, _, last = self.en.rpartition(" ")
        return (self.en, f"{head} {_plural(last)}".strip())

    @property
    def pattern(self):
        """Any of the term's forms as a whole word: not inside another word, not part of code
        (x.mean(, mean_D, running_mean are identifiers, not the word)."""
        forms = sorted(self.words, key=len, reverse=True)
        alternatives = "|".join(r"[\s-]+".join(map(re.escape, form.split())) for form in forms)
        return re.compile(rf"(?<![\w.])(?:{alternatives})(?![\w(])", re.IGNORECASE)


@lru_cache(maxsize=1)
def terms():
    """Every glossary term, in the file's order."""
    with open(PATH, "rb") as f:
        return tuple(Term(**entry) for entry in tomllib.load(f)["term"])


# code: ``double-backquoted`` (across lines too) first, then `single-backquoted`
CODE = re.compile(r"``[\s\S]+?``|`[^`\n]*`")


# code without backquotes: a call or signature, SyncBatchNorm(num_features, eps, momentum);
# a formula's names, query = key = value = x, x - mean, momentum=None, mask ~ Bernoulli, the
# name an assignment sets (mean = mean_D(x)); a method by its name,
# "the backward method", "forward and backward methods"
CALL = re.compile(r"[\w.]+\((?:[^()]|\([^()]*\))*\)")
FORMULA = re.compile(r"[\w.]+(?:(?:\s+(?:[-+*/<>~]|[<>=!]=|\*\*)\s+|\s*=\s*)[\w.]+)+"
                     r"|[\w.]+\s*=(?!=)|[\w.]+\s+~")  # an assignment's name: mean = ...; mask ~
METHOD = re.compile(r"\b\w+(?:\s+(?:and|or)\s+\w+)?\s+methods?\b", re.IGNORECASE)


def prose(english):
    """The words of an English message: without placeholders such as {name}, code (in
    backquotes, or a call, a formula or a method's name without them), a title in double
    quotes (a paper's, kept as published) and example command lines (a line beginning
    "normcore ...")."""
    text = re.sub(r'\{[^}]*\}|"[^"]*"', " ", CODE.sub(" ", english))
    for code in (CALL, FORMULA, METHOD):
        text = code.sub(" ", text)
    # an example's command line: a line that begins with it, up to two spaces or the line's end
    return re.sub(r"(?m)^\s*normcore\b.*?(?=\s{2,}|$)", " ", text)


def missing_terms(english, chinese):
    """The terms ``english`` uses whose Chinese term ``chinese`` lacks. Only the message's
    prose counts (see ``prose``), and a term inside a longer one is that term's ("internal
    covariate shift" asks for 内部协变量偏移, not for shift's 平移)."""
    text = prose(english)
    missing = []
    for t in sorted(terms(), key=lambda t: -len(t.en)):  # the longest terms first
        if t.pattern.search(text):
            kept = t.method and re.search(rf"(?<![\w.]){re.escape(t.en)}(?!\w)", chinese)
            if t.zh not in chinese and not kept:  # the term, or the method's name as code
                missing.append(t)
            text = t.pattern.sub(" ", text)
    return sorted(missing, key=terms().index)


def avoided_terms(chinese):
    """(rejected word, glossary term) for each word the glossary rejects (a regular
    expression of ``avoid``) that ``chinese`` uses outside code."""
    text = CODE.sub(" ", chinese)
    return [(found.group(), t) for t in terms() for word in t.avoid
            if (found := re.search(word, text))]


# a parenthesised group: full-width always; half-width unless it is a call or an index
# (mean(x), x[0](...)), i.e. unless an ASCII letter, digit, _ . ] or ) comes right before it
_OPEN = re.compile(r"（|(?<![A-Za-z0-9_.\])])\(")


def parenthesised(text):
    """The parenthesised groups of ``text`` that are asides, outermost only, outside code:
    "(N, C)", "（而不是均值之类）"; not the arguments of a call such as ``mean(x)``, nor what
    a quotation holds (a title quoted as published: “Pre-Norm（Norm 在残差前）”)."""
    text = re.sub(r'“[^”]*”|"[^"]*"', " ", CODE.sub(" ", text))
    groups, start = [], 0
    while (m := _OPEN.search(text, start)):
        depth, i = 0, m.start()
        for i in range(m.start(), len(text)):
            if text[i] in "(（":
                depth += 1
            elif text[i] in ")）":
                depth -= 1
                if depth == 0:
                    break
        groups.append(text[m.start():i + 1])
        start = i + 1
    return groups


def _inside(group):
    """A group's text without its parentheses, spaces and the width of its punctuation."""
    return re.sub(r"\s+", "", group[1:-1]).translate(str.maketrans("，：；", ",:;"))


def _tokens(text):
    return set(re.findall(r"[A-Za-z_][\w.]*|\d+(?:\.\d+)?", text))


def added_glosses(english, chinese):
    """The parenthesised groups of ``chinese`` that ``english`` has no counterpart for: what a
    translator added, such as ".backward（反向）" or "（而不是均值之类）". Full-width and
    half-width parentheses count alike; a call's arguments (``mean(x)``) are no aside. Groups
    pair off first when their text is the same ("(N, C)" and "(N, C)"), then each English aside
    with the Chinese one sharing the most code and numbers with it, the nearest in its place in
    the sentence first. Empty when the translation adds none."""
    en, zh = _places(english), _places(chinese)
    left = []
    for group, where in zh:
        same = next((e for e in en if _inside(e[0]) == _inside(group)), None)
        if same is None:
            left.append((group, where))
        else:
            en.remove(same)
    for group, where in en:  # its counterpart: the most code and numbers shared, then the nearest
        if left:
            left.remove(min(left, key=lambda z: (-len(_tokens(z[0]) & _tokens(group)),
                                                 abs(z[1] - where))))
    return [group for group, _ in left]


def _places(text):
    """The asides of ``text`` with where each is, as a fraction of the text's length."""
    groups, start = [], 0
    for group in parenthesised(text):
        start = text.find(group, start)
        groups.append((group, max(start, 0) / max(len(text), 1)))
    return groups
