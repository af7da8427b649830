"""The quiz of ``normcore practice questions``: a question, then (on Enter) its answer, where
normcore shows it and the common wrong answers; each one asked recorded in the history.

    print(format_question(q, k, n))    the question's heading and text (80 columns)
    print(format_answer(q))            its answer, evidence and wrong answers (80 columns)
    quiz(questions)                    ask them in a terminal: reveal on Enter, ask y/n, record
    draw(questions, n, seed)           n of them at random (seed: None for a fresh draw)
"""

import random
import re
from datetime import UTC, datetime

from ...i18n import language, translator
from ...notebooks import in_language
from ...i18n.width import fill
from .. import history
from . import TOPIC_TITLES

_ = translator("practice")
WIDTH = 80


def draw(questions, n, seed=None):
    """``n`` of ``questions`` at random, in the drawn order (all of them when n is larger);
    the same seed draws the same ones."""
    return random.Random(seed).sample(list(questions), min(n, len(questions)))


def _block(text, indent="  "):
    """``text`` filled to 80 columns with ``indent``, each paragraph (a blank line between
    paragraphs in the bank's text) on its own."""
    return "\n".join(fill(" ".join(part.split()), WIDTH, indent=indent)
                     for part in re.split(r"\n\s*\n", text.strip()))


def format_question(question, number=None, total=None):
    """The heading (position, id, topic) and the question, in the language in use."""
    where = f"[{number}/{total}] " if number else ""
    topic = _(TOPIC_TITLES[question.topic])
    return "\n".join([fill(f"{where}{question.id}  [{topic}]", WIDTH),
                      _block(question.text("question"))])


def command_in_language(command, lang=None):
    """A normcore command as a reader of ``lang`` (default: the language in use) runs it to read
    its output in that language: "normcore explain layernorm --lang zh" in Chinese (as the docs
    write it), the command as it is in English (and any text that is no normcore command)."""
    lang = language() if lang is None else lang
    words = command.split()
    if lang == "en" or words[:1] != ["normcore"] or any(w.startswith("--lang") for w in words):
        return command
    return f"{command} --lang {lang}"


def evidence_label(pointer):
    """An evidence pointer as a reader of the language in use finds it: a notebook's edition
    in that language where there is one (the claims rows are in claims_zh.ipynb for a Chinese
    reader), a command with the option that makes it speak that language."""
    if match := re.fullmatch(r"claims row ([a-z0-9-]+)", pointer):
        notebook = "notebooks/" + in_language("claims.ipynb")
        return _("{notebook}, the claim {row}").format(notebook=notebook, row=match.group(1))
    if match := re.fullmatch(r"notebooks/(\w+\.ipynb)(.*)", pointer):
        return "notebooks/" + in_language(match.group(1)) + match.group(2)
    if match := re.fullmatch(r"experiment (\w+)", pointer):
        return _("the experiment {name}: {command}").format(
            name=match.group(1), command=command_in_language(f"normcore figures {match.group(1)} --quick"))
    return command_in_language(pointer)


def writeup_label(writeup):
    """"W3, claims row ROW" as the reader's language says it."""
    head, _sep, row = writeup.partition(", claims row ")
    if row:
        return _("made by {writeup}; see the claim {row}").format(writeup=head, row=row)
    return _("made by {writeup}").format(writeup=head)


def format_answer(question):
    """The answer, the evidence (one pointer a line) and the common wrong answers with why
    each is wrong, in the language in use; 80 columns."""
    out = [_("Answer:"), _block(question.text("answer")), "", _("Where normcore shows it:")]
    out += [fill(evidence_label(e), WIDTH, indent="  - ", subsequent_indent="    ")
            for e in question.evidence]
    out += ["", _("Common wrong answers:")]
    for w in question.wrong:
        out.append(fill(_("Wrong: {answer}").format(answer=w.text("answer")), WIDTH,
                        indent="  - ", subsequent_indent="    "))
        why = w.text("why")
        if w.writeup:
            why = _("{why} ({source})").format(why=why, source=writeup_label(w.writeup))
        out.append(fill(_("Why: {text}").format(text=why), WIDTH, indent="    "))
    return "\n".join(out)


def print_all(questions, out=print):
    """Every question with its answer, for a reader without a terminal (piped, redirected)."""
    for k, q in enumerate(questions, 1):
        out(format_question(q, k, len(questions)) + "\n\n" + format_answer(q) + "\n\n"
            + "=" * WIDTH)


def quiz(questions, ask=None, out=print, history_path=None):
    """Ask each question: show it, wait for Enter, reveal the answer, ask whether the
    candidate knew it and record it in the history. Returns the records made; stops quietly
    when the input ends (Ctrl-D) or is interrupted (Ctrl-C)."""
    ask = ask or input  # looked up at the call: a test replaces builtins.input
    records = []
    for k, q in enumerate(questions, 1):
        out(format_question(q, k, len(questions)))
        try:
            ask(_("(press Enter to see the answer) "))
            out("\n" + format_answer(q))
            reply = ask(_("Did you know it? [y/n] ")).strip().lower()
        except (EOFError, KeyboardInterrupt):
            out("")
            break
        known = True if reply[:1] in ("y", "是", "会") else False if reply[:1] in ("n", "否", "不") \
            else None
        record = history.Asked(datetime.now(UTC).isoformat(timespec="seconds"), q.id, q.topic,
                               known, language())
        history.append(record, history_path)
        records.append(record)
        out("=" * WIDTH)
    if records:
        known = sum(bool(r.known) for r in records)
        out(fill(_("Known: {known} of {asked}. normcore practice history shows every question "
                   "asked.").format(known=known, asked=len(records)), WIDTH))
    return records
