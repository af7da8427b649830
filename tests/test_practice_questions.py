"""The interview question bank (normcore/practice/questions) and ``normcore practice questions``.

Every quoted number is recomputed by its measure; every number-like token of an answer is one
of them; ids, topics and evidence pointers exist; the Chinese uses the glossary's terms and adds
no parenthesised gloss. Each check is also run on a bank written wrong on purpose, to show
that it fails.
"""

import json
import re
import sys

import pytest

from i18n_checks import english_runs, wide_lines
from normcore.cli import main
from normcore.i18n import speaking
from normcore.i18n.width import display_width
from normcore.practice import history, questions
from normcore.practice.questions import quiz

BANK = questions.bank()
IDS = [q.id for q in BANK]


def _by_id(qid):
    return questions.by_id(qid)


# --- the bank as it is ---------------------------------------------------------------------
def test_the_norms_bank_has_its_questions_and_the_banks_together_forty():
    norms = [q for q in BANK if q.bank == "bank_norms.toml"]
    assert len(norms) >= 22
    if not (questions.FOLDER / "bank_transformer.toml").exists():
        pytest.skip("bank_transformer.toml is not in this checkout yet")
    assert len(BANK) >= 40


def test_ids_are_unique_and_topics_known():
    assert len(IDS) == len(set(IDS))
    assert {q.topic for q in BANK} <= set(questions.TOPICS)
    assert all(q.wrong for q in BANK)


@pytest.mark.parametrize("qid", IDS)
def test_every_quoted_number_is_what_its_measure_computes(qid):
    assert questions.number_problems(_by_id(qid)) == []


@pytest.mark.parametrize("qid", IDS)
def test_no_number_is_typed_without_a_measure(qid):
    assert questions.uncovered_numbers(_by_id(qid)) == []


@pytest.mark.parametrize("qid", IDS)
def test_every_evidence_pointer_exists(qid):
    assert questions.evidence_problems(_by_id(qid)) == []


@pytest.mark.parametrize("qid", IDS)
def test_the_chinese_uses_the_glossary_and_adds_no_gloss(qid):
    assert questions.translation_problems(_by_id(qid)) == []


def test_every_writeup_claims_row_exists():
    rows = questions.claims_rows()
    cited = {w.claims_row for q in BANK for w in q.wrong if w.claims_row}
    assert cited and cited <= rows


def _sentences(text, zh):
    """The sentences of an answer: ending in 。 (Chinese), or . ? ! before a space or the end."""
    ends = re.findall(r"[。？！]" if zh else r"[.?!](?=\s|$)", text.strip())
    return len(ends)


@pytest.mark.parametrize("qid", IDS)
def test_answers_are_of_interview_length(qid):
    q = _by_id(qid)
    assert 3 <= _sentences(q.answer, False) <= 6, q.answer
    assert 3 <= _sentences(q.answer_zh, True) <= 6, q.answer_zh


def test_every_number_appears_in_both_answers():
    for q in BANK:
        for n in q.numbers:
            assert n.text in q.answer and n.text in q.answer_zh, (q.id, n.text)


# --- the checks fail on a bank written wrong ---------------------------------------------------
GOOD = '''
[[question]]
id = "demo"
topic = "batchnorm"
question = "What is the default momentum?"
question_zh = "默认的动量是多少？"
answer = """It is 0.1. It weighs the new batch. That is PyTorch's convention."""
answer_zh = """是 0.1。它是新 batch 的权重。这是 PyTorch 的约定。"""
evidence = ["normcore explain batchnorm", "claims row bn-momentum-flipped"]

[[question.number]]
text = "0.1"
measure = "default_momentum"
format = "{:g}"

[[question.wrong]]
answer = "It is 0.9."
answer_zh = "是 0.9。"
why = "That is the decay convention."
why_zh = "那是衰减约定。"
writeup = "W3, claims row bn-momentum-flipped"
'''
MEASURES = "def default_momentum():\n    import normcore as nc\n    return nc.BatchNorm1d(1).momentum\n"


def _bank(tmp_path, text, name="demo"):
    (tmp_path / f"bank_{name}.toml").write_text(text, encoding="utf-8")
    (tmp_path / f"measures_{name}.py").write_text(MEASURES, encoding="utf-8")
    return questions.load(tmp_path)


def test_a_well_written_bank_passes_every_check(tmp_path):
    (q,) = _bank(tmp_path, GOOD)
    assert (questions.number_problems(q) + questions.uncovered_numbers(q)
            + questions.evidence_problems(q) + questions.translation_problems(q)) == []


@pytest.mark.parametrize("old, new, check", [
    ('format = "{:g}"', 'format = "{:.2f}"', questions.number_problems),       # 0.10, not 0.1
    ("It weighs the new batch.", "It weighs 1.5 times the batch.", questions.uncovered_numbers),
    ("claims row bn-momentum-flipped\"]", "claims row no-such-row\"]", questions.evidence_problems),
    ('"normcore explain batchnorm"', '"normcore explain batchnorms"', questions.evidence_problems),
    ('"normcore explain batchnorm"', '"figures/nothing.png"', questions.evidence_problems),
    ('"normcore explain batchnorm"', '"notebooks/batchnorm.ipynb §42"', questions.evidence_problems),
    ("默认的动量是多少？", "默认的 momentum 是多少？", questions.translation_problems),
    ("它是新 batch 的权重。", "它（新的）是新 batch 的权重。", questions.translation_problems),
])
def test_each_check_fails_on_a_bank_written_wrong(tmp_path, old, new, check):
    assert old in GOOD
    (q,) = _bank(tmp_path, GOOD.replace(old, new))
    assert check(q), f"{check.__name__} missed {new!r}"


@pytest.mark.parametrize("old, new, message", [
    ('text = "0.1"', 'text = "0.10"', "does not appear in answer"),
    ('topic = "batchnorm"', 'topic = "cooking"', "unknown topic"),
    ('id = "demo"', 'id = "Demo Question"', "kebab-case"),
    ('measure = "default_momentum"', 'measure = "nothing"', "no function nothing"),
    ('writeup = "W3, claims row bn-momentum-flipped"', 'writeup = "W9"', "writeup"),
    ('question_zh = "默认的动量是多少？"\n', "", "'question_zh'"),
    ("[[question.wrong]]", "[[question.wrongs]]", "unknown key"),
])
def test_a_malformed_entry_is_refused_naming_the_file_and_question(tmp_path, old, new, message):
    assert old in GOOD
    with pytest.raises(questions.BankError, match=message) as error:
        _bank(tmp_path, GOOD.replace(old, new))
    assert "bank_demo.toml" in str(error.value) and "demo" in str(error.value)


def test_an_id_used_in_two_banks_is_refused(tmp_path):
    _bank(tmp_path, GOOD, "one")
    with pytest.raises(questions.BankError, match="already used in bank_one.toml"):
        _bank(tmp_path, GOOD, "two")


# --- the command ----------------------------------------------------------------------------
@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def _ids_in(out):
    return re.findall(r"^\[\d+/\d+\] (\S+)", out, re.MULTILINE)


def test_piped_prints_every_question_with_its_answer(home, capsys):
    assert main(["practice", "questions", "--topic", "folding"]) == 0
    out = capsys.readouterr().out
    folding = [q for q in BANK if q.topic == "folding"]
    assert _ids_in(out) == [q.id for q in folding] and folding
    assert out.count("Answer:") == len(folding) and "Common wrong answers:" in out
    assert "3.45" in out and not wide_lines(out)
    assert not history.history_file().exists()  # printed, not asked: nothing recorded


def test_topics_repeated_or_with_commas_select_the_same(home, capsys):
    main(["practice", "questions", "--list", "--topic", "folding,rmsnorm"])
    commas = capsys.readouterr().out
    main(["practice", "questions", "--list", "--topic", "folding", "--topic", "rmsnorm"])
    assert capsys.readouterr().out == commas
    assert {q.id for q in BANK if q.topic in ("folding", "rmsnorm")} == set(
        re.findall(r"^  (\S+)  \[", commas, re.MULTILINE))
    assert main(["practice", "questions", "--topic", "cooking"]) == 2
    assert "unknown topic cooking" in capsys.readouterr().err


def test_list_shows_questions_without_answers(home, capsys):
    assert main(["practice", "questions", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(qid in out for qid in IDS) and "Answer:" not in out and not wide_lines(out)


def test_random_draws_n_and_the_seed_repeats_the_draw(home, capsys):
    draws = []
    for seed in ("5", "5", "6"):
        main(["practice", "questions", "--random", "3", "--seed", seed])
        draws.append(_ids_in(capsys.readouterr().out))
    assert len(draws[0]) == 3 and draws[0] == draws[1] != draws[2]
    with pytest.raises(SystemExit):
        main(["practice", "questions", "--random", "0"])


def test_one_question_by_id_and_an_unknown_id(home, capsys):
    assert main(["practice", "questions", "bn-vs-ln-axes"]) == 0
    assert _ids_in(capsys.readouterr().out) == ["bn-vs-ln-axes"]
    assert main(["practice", "questions", "no-such-question"]) == 2
    assert "no question no-such-question" in capsys.readouterr().err


def test_a_terminal_quiz_reveals_on_enter_and_records_the_history(home, capsys, monkeypatch):
    replies = iter(["", "y", "", "n"])
    prompts = []

    def ask(prompt=""):
        prompts.append(prompt)
        return next(replies)

    monkeypatch.setattr("builtins.input", ask)
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    assert main(["practice", "questions", "--topic", "folding"]) == 0
    out = capsys.readouterr().out
    assert len(prompts) == 4 and "Enter" in prompts[0] and "[y/n]" in prompts[1]
    asked = history.load_asked()
    assert [(a.question, a.topic, a.known) for a in asked] == [
        ("fold-batchnorm", "folding", True), ("fold-layernorm", "folding", False)]
    assert "Known: 1 of 2" in out
    assert main(["practice", "history"]) == 0
    shown = capsys.readouterr().out
    assert "fold-layernorm" in shown and "Known: 1 of 2 answered" in shown
    assert not wide_lines(shown)
    assert main(["practice", "history", "--json"]) == 0
    assert [q["question"] for q in json.loads(capsys.readouterr().out)["questions"]] == [
        "fold-batchnorm", "fold-layernorm"]


def test_the_quiz_stops_quietly_when_the_input_ends(home):
    def ask(prompt=""):
        raise EOFError

    assert quiz.quiz(BANK[:2], ask=ask, out=lambda *a: None) == []
    assert history.load_asked() == []


def test_an_old_history_file_still_loads_beside_the_new_records(home):
    attempt = {"date": "2026-01-02T10:00:00+00:00", "exercise": "layernorm",
               "file": "my_layernorm.py", "time_box": 20, "minutes_taken": 12.0,
               "over_time": False, "ended": "enter", "passed": True}
    home.mkdir(parents=True)
    history.history_file().write_text(json.dumps(attempt) + "\n")
    (old,), problems = history.load()
    assert old.exercise == "layernorm" and problems == [] and history.load_asked() == []
    history.append(history.Asked("2026-01-03T10:00:00+00:00", "bn-vs-ln-axes", "batchnorm", True))
    attempts, problems = history.load()
    assert [a.exercise for a in attempts] == ["layernorm"] and problems == []
    assert [a.question for a in history.load_asked()] == ["bn-vs-ln-axes"]


# a formula: names joined by operators, over a line break too (the formulas stay English)
FORMULA = re.compile(r"[\w.()\[\]^'`]+(?:\s*(?:[-+*/=@]|\*\*)\s*[\w.()\[\]^'`]+)+")


def test_chinese_output_fits_80_columns_and_is_chinese(home, capsys):
    assert main(["practice", "questions", "--lang", "zh"]) == 0
    out = capsys.readouterr().out
    assert not wide_lines(out)
    assert "答案：" in out and "Answer:" not in out and "Common wrong" not in out
    assert max(map(display_width, out.splitlines())) <= 80
    prose = FORMULA.sub(" ", re.sub(r"(?m)^\s*- ", "", out))  # list markers, then formulas
    assert not english_runs(prose, allowed=("et al.",))  # a citation: "Liu et al. 2020"
    with speaking("zh"):
        text = quiz.format_answer(_by_id("momentum-conventions"))
    assert "claims_zh.ipynb" in text and "（" in text


def test_a_notebook_pointer_names_the_readers_edition_of_the_notebook():
    from normcore import i18n
    from normcore.practice.questions.quiz import evidence_label

    with i18n.speaking("zh"):
        assert evidence_label("notebooks/batchnorm.ipynb §1") == "notebooks/batchnorm_zh.ipynb §1"
        assert evidence_label("notebooks/dropout.ipynb §2") == "notebooks/dropout.ipynb §2"
        assert "notebooks/claims_zh.ipynb" in evidence_label("claims row bn-axes")
    with i18n.speaking("en"):
        assert evidence_label("notebooks/batchnorm.ipynb §1") == "notebooks/batchnorm.ipynb §1"


def test_a_command_pointer_runs_in_the_readers_language():
    """A Chinese candidate who runs an evidence command reads its output in Chinese: the
    terminal's answer and the Chinese questions page show it with --lang zh, English without."""
    from normcore.docs.generate import questions_page
    from normcore.practice.questions.quiz import command_in_language, evidence_label

    with speaking("zh"):
        assert evidence_label("normcore explain batchnorm") == "normcore explain batchnorm --lang zh"
        assert evidence_label("experiment batch_size").endswith("normcore figures batch_size --quick --lang zh")
        assert evidence_label("figures/batch_size_error.png") == "figures/batch_size_error.png"
        assert "normcore explain layernorm --lang zh" in quiz.format_answer(_by_id("ln-train-vs-inference"))
    with speaking("en"):
        assert evidence_label("normcore explain batchnorm") == "normcore explain batchnorm"
    assert command_in_language("normcore explain rmsnorm --lang zh", "zh") == "normcore explain rmsnorm --lang zh"
    zh, en = questions_page("zh"), questions_page("en")
    assert "`normcore explain batchnorm --lang zh`" in zh and "`normcore explain batchnorm`" not in zh
    assert "`normcore explain batchnorm`" in en and "--lang" not in en
