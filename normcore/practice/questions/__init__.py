"""The interview questions on normalization (面试八股), each answered with normcore's own numbers.

    questions = load()                 every question of every bank_*.toml here, validated
    q = by_id("bn-vs-ln-axes")         one question
    q.text("question", "zh")           a field in a language ("en" or "zh")
    problems = number_problems(q)      the quoted numbers that their measures do not give

A bank is ``bank_NAME.toml`` with its measures in ``measures_NAME.py`` beside it: one
``[[question]]`` table per question (id, topic, question, question_zh, answer, answer_zh,
evidence), one ``[[question.number]]`` per number the answer quotes (its ``text``, the
``measure`` function of the sibling module that computes it, the ``format`` that turns the
measure's value into the text) and at least one ``[[question.wrong]]`` (a common wrong answer,
why it is wrong, and ``writeup``: the seed write-up that makes it, "W3" or
"W3, claims row bn-momentum-flipped"). ``load`` checks the form of every entry and raises
``BankError`` naming the file and the question; calling the measures (slower) is left to
``number_problems`` and the tests.
"""

import importlib
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ...i18n import N_, language

FOLDER = Path(__file__).resolve().parent
TOPICS = ("batchnorm", "layernorm", "rmsnorm", "groupnorm", "statistics", "placement",
          "small-batch", "folding", "dropout", "transformer", "modern", "logits", "weights")
# the topics as headings name them, translated where shown (the ids are what --topic takes)
TOPIC_TITLES = {"batchnorm": "BatchNorm", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm",
                "groupnorm": "GroupNorm", "statistics": N_("statistics"),
                "placement": N_("placement"), "small-batch": N_("small batches"),
                "folding": N_("folding"), "dropout": "Dropout", "transformer": "Transformer",
                "modern": N_("since 2020"), "logits": N_("logit control"),
                "weights": N_("normalizing the weights")}
QUESTION_KEYS = ("id", "topic", "question", "question_zh", "answer", "answer_zh", "evidence")
NUMBER_KEYS = ("text", "measure", "format")
WRONG_KEYS = ("answer", "answer_zh", "why", "why_zh")
ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
WRITEUP = re.compile(r"W[1-4](?:, claims row ([a-z0-9]+(?:-[a-z0-9]+)*))?")
# a number as an answer quotes it: with a decimal point, a percent sign or a times sign
NUMBER_LIKE = re.compile(r"\d*\.\d+(?:e[-+]?\d+)?\s*[%×]?|\d+\s*[%×]|×\s*\d+")


class BankError(ValueError):
    """A bank file whose entry is malformed: the message names the file and the question."""


@dataclass(frozen=True)
class Number:
    """A number an answer quotes, and the measure that computes it."""

    text: str
    measure: str  # a function of the bank's measures module
    format: str   # format.format(value) must give text
    module: str   # the measures module's import name

    def value(self):
        return getattr(importlib.import_module(self.module), self.measure)()

    def formatted(self):
        """The measure's value, formatted as the answer quotes it."""
        return self.format.format(self.value())


@dataclass(frozen=True)
class Wrong:
    """A common wrong answer and why it is wrong; ``writeup`` names the write-up that makes it."""

    answer: str
    answer_zh: str
    why: str
    why_zh: str
    writeup: str = ""

    def text(self, field, lang=None):
        return _in_language(self, field, lang)

    @property
    def claims_row(self):
        """The claims row id the writeup field names, or None."""
        match = WRITEUP.fullmatch(self.writeup)
        return match.group(1) if match else None


@dataclass(frozen=True)
class Question:
    """One interview question with its answer in both languages, where normcore shows it, the
    numbers it quotes and the common wrong answers."""

    id: str
    topic: str
    question: str
    question_zh: str
    answer: str
    answer_zh: str
    evidence: tuple
    numbers: tuple
    wrong: tuple
    bank: str  # the file's name

    def text(self, field, lang=None):
        """``field`` ("question" or "answer") in ``lang`` (default: the language in use)."""
        return _in_language(self, field, lang)


def _in_language(entry, field, lang):
    zh = (lang or language()) == "zh"
    return getattr(entry, field + "_zh" if zh else field)


def _fail(path, qid, message):
    raise BankError(f"{path.name}, question {qid}: {message}")


def _strings(path, qid, table, keys, where):
    """The values of ``keys`` in ``table``: each a non-empty string, and no key besides them
    (and ``optional``) unknown."""
    for key in keys:
        if not isinstance(table.get(key), str) or not table[key].strip():
            _fail(path, qid, f"{where}'{key}' must be a non-empty string")
    return {key: table[key].strip() for key in keys}


def _unknown(path, qid, table, allowed, where):
    extra = sorted(set(table) - set(allowed))
    if extra:
        _fail(path, qid, f"{where}unknown key(s) {', '.join(extra)}; expected "
                         f"{', '.join(allowed)}")


def _number(path, qid, table, module, measures, answers):
    _unknown(path, qid, table, NUMBER_KEYS, "number: ")
    entry = _strings(path, qid, table, NUMBER_KEYS, "number: ")
    if entry["measure"] not in measures:
        _fail(path, qid, f"number {entry['text']!r}: no function {entry['measure']} in "
                         f"{module}")
    for name, answer in answers.items():
        if entry["text"] not in answer:
            _fail(path, qid, f"number {entry['text']!r} does not appear in {name}")
    return Number(**entry, module=module)


def _wrong(path, qid, table):
    _unknown(path, qid, table, WRONG_KEYS + ("writeup",), "wrong answer: ")
    entry = _strings(path, qid, table, WRONG_KEYS, "wrong answer: ")
    writeup = table.get("writeup", "")
    if writeup and not (isinstance(writeup, str) and WRITEUP.fullmatch(writeup)):
        _fail(path, qid, f"wrong answer: writeup {writeup!r} is not 'W1'..'W4' or "
                         "'W3, claims row ROW-ID'")
    return Wrong(**entry, writeup=writeup)


def _question(path, table, module, measures):
    qid = table.get("id", "?")
    if not isinstance(qid, str) or not ID.fullmatch(qid):
        _fail(path, qid, "'id' must be kebab-case (lower-case words joined by -)")
    _unknown(path, qid, table, QUESTION_KEYS + ("number", "wrong"), "")
    entry = _strings(path, qid, table, QUESTION_KEYS[:-1], "")
    if entry["topic"] not in TOPICS:
        _fail(path, qid, f"unknown topic {entry['topic']!r}; expected one of {', '.join(TOPICS)}")
    evidence = table.get("evidence")
    if not (isinstance(evidence, list) and evidence
            and all(isinstance(e, str) and e.strip() for e in evidence)):
        _fail(path, qid, "'evidence' must be a non-empty list of strings")
    answers = {"answer": entry["answer"], "answer_zh": entry["answer_zh"]}
    numbers = tuple(_number(path, qid, n, module, measures, answers)
                    for n in _tables(path, qid, table, "number"))
    wrong = tuple(_wrong(path, qid, w) for w in _tables(path, qid, table, "wrong"))
    if not wrong:
        _fail(path, qid, "no [[question.wrong]]: at least one common wrong answer")
    return Question(**entry, evidence=tuple(evidence), numbers=numbers, wrong=wrong,
                    bank=path.name)


def _tables(path, qid, table, key):
    value = table.get(key, [])
    if not (isinstance(value, list) and all(isinstance(v, dict) for v in value)):
        _fail(path, qid, f"'{key}' must be [[question.{key}]] tables")
    return value


def load_bank(path):
    """The questions of one bank file (its measures in the sibling measures_NAME.py), checked;
    BankError names the file and the question of a malformed entry."""
    path = Path(path)
    name = path.stem.removeprefix("bank_")
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise BankError(f"{path.name}: not valid TOML ({e})") from None
    if not (path.parent / f"measures_{name}.py").exists():
        raise BankError(f"{path.name}: no measures_{name}.py beside it")
    module = (f"{__name__}.measures_{name}" if path.parent == FOLDER
              else _module_from_file(path.parent / f"measures_{name}.py"))
    measures = {k for k, v in vars(importlib.import_module(module)).items() if callable(v)}
    tables = data.get("question")
    if not (isinstance(tables, list) and tables):
        raise BankError(f"{path.name}: no [[question]] tables")
    return [_question(path, t, module, measures) for t in tables]


def _module_from_file(file):
    """Import a measures file outside the package (a bank being written elsewhere); its name."""
    import sys
    from importlib.util import module_from_spec, spec_from_file_location

    name = f"_normcore_measures_{file.stem}"
    spec = spec_from_file_location(name, file)
    module = module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return name


def load(folder=None):
    """Every question of every bank_*.toml in ``folder`` (default: this package), in file
    order; BankError on a malformed entry or an id used twice."""
    folder = Path(folder) if folder else FOLDER
    questions, seen = [], {}
    for path in sorted(folder.glob("bank_*.toml")):
        for q in load_bank(path):
            if q.id in seen:
                raise BankError(f"{path.name}, question {q.id}: id already used in {seen[q.id]}")
            seen[q.id] = path.name
            questions.append(q)
    return questions


@cache
def bank():
    """The package's questions, loaded once."""
    return tuple(load())


def by_id(qid):
    """The question with this id; KeyError naming the known ids when there is none."""
    for q in bank():
        if q.id == qid:
            return q
    raise KeyError(qid)


def select(topics=None):
    """The questions of these topics (all when None or empty), in bank order."""
    return [q for q in bank() if not topics or q.topic in topics]


# --- the checks the tests run (each returns a list of problems, [] when all is well) ----------
def number_problems(question):
    """Each quoted number whose measure, formatted, is not its text."""
    problems = []
    for n in question.numbers:
        got = n.formatted()
        if got != n.text:
            problems.append(f"{question.id}: {n.measure}() formats to {got!r}, the answer "
                            f"quotes {n.text!r}")
    return problems


def uncovered_numbers(question):
    """Number-like tokens (a decimal point, a % or a ×) in the answers that no number entry
    covers: a number typed rather than measured."""
    problems = []
    for field in ("answer", "answer_zh"):
        text = getattr(question, field)
        for n in sorted(question.numbers, key=lambda n: -len(n.text)):
            text = text.replace(n.text, " ")
        problems += [f"{question.id}: {field} quotes {m.group().strip()!r}, which no "
                     "[[question.number]] measures" for m in NUMBER_LIKE.finditer(text)]
    return problems


REPO = FOLDER.parents[2]  # the source checkout: figures/, notebooks/ (not in an installed copy)
EVIDENCE_FORMS = ("normcore explain NAME [options]", "figures/NAME.png",
                  "notebooks/NAME.ipynb §N", "claims row ID", "experiment NAME")


def evidence_problems(question, repo=REPO):
    """Each evidence pointer that leads nowhere: an explain topic normcore does not have, a
    figure or notebook section that does not exist, an unknown claims row or experiment."""
    return [f"{question.id}: evidence {e!r} {why}" for e in question.evidence
            if (why := _evidence_problem(e, Path(repo)))]


def _evidence_problem(pointer, repo):
    """Why ``pointer`` leads nowhere, or None when it exists."""
    from ...derivations.steps import KINDS

    words = pointer.split()
    if words[:2] == ["normcore", "explain"]:
        return None if len(words) > 2 and words[2] in KINDS else "names no explain topic"
    if re.fullmatch(r"figures/[\w-]+\.png", pointer):
        return None if (repo / pointer).exists() else "is not a figure"
    if match := re.fullmatch(r"notebooks/(\w+)\.ipynb §(\d+)", pointer):
        source = repo / "notebooks" / "src" / f"{match.group(1)}.py"
        heading = re.compile(rf"(?m)^\s*## {match.group(2)}\. ")
        if source.exists() and heading.search(source.read_text(encoding="utf-8")):
            return None
        return "is not a section of a notebook"
    if match := re.fullmatch(r"claims row ([a-z0-9-]+)", pointer):
        return None if match.group(1) in claims_rows(repo) else "is not a claims row"
    if match := re.fullmatch(r"experiment (\w+)", pointer):
        return None if (FOLDER.parents[1] / "experiments" / f"{match.group(1)}.py").exists() \
            else "is not a normcore experiment"
    return "has none of the forms " + "; ".join(EVIDENCE_FORMS)


def claims_rows(repo=REPO):
    """The ids of the claims table's rows (notebooks/src/claims_data_*.py)."""
    files = sorted((Path(repo) / "notebooks" / "src").glob("claims_data_*.py"))
    return {row for f in files for row in re.findall(r'claim\("([a-z0-9-]+)"', f.read_text(encoding="utf-8"))}


def pairs(question):
    """Every (where, English, Chinese) text pair of a question: question, answer, the wrong
    answers and why they are wrong."""
    out = [(f"{question.id} question", question.question, question.question_zh),
           (f"{question.id} answer", question.answer, question.answer_zh)]
    for i, w in enumerate(question.wrong, 1):
        out += [(f"{question.id} wrong {i}", w.answer, w.answer_zh),
                (f"{question.id} wrong {i} why", w.why, w.why_zh)]
    return out


PARENTHESES = re.compile(r"[(（][^()（）]*[)）]")


def translation_problems(question):
    """Chinese that lacks a glossary term its English uses, or that adds parenthesised
    glosses its English does not have (more parentheses in the Chinese than in the English)."""
    from ...i18n.glossary import missing_terms

    problems = []
    for where, en, zh in pairs(question):
        missing = missing_terms(en, zh)
        if missing:
            problems.append(f"{where}: the Chinese lacks " + ", ".join(
                f"{t.zh} ({t.en})" for t in missing))
        if len(PARENTHESES.findall(zh)) > len(PARENTHESES.findall(en)):
            problems.append(f"{where}: the Chinese has a parenthesis the English does not: "
                            + "; ".join(PARENTHESES.findall(zh)))
    return problems
