"""The practice modes: forward-only answers, hint levels, mock interviews and their history.

Check counts are never written down: they come from grading the same file. No test waits for
a person or measures a time: stdin is a fake (closed, or a "candidate" who writes the file
and presses Enter) and the interview's clock is a fake that says how many seconds passed.
"""

import ast
import doctest
import importlib.util
import io
import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from normcore.cli import main
from normcore.practice import EXERCISES, format_report, grade_file, history, interview
from normcore.practice.catalog import BY_ID
from normcore.practice.classroom import format_table, grade_many
from normcore.practice.grader import NOT_ASKED, PASSING, CannotGrade
from normcore.practice.mutants import solution_source
from normcore.practice.probes import is_backward
from normcore.practice.report import hint_level
from normcore.practice.skeletons import FORWARD_ONLY_FLAG, NoForwardOnly, skeleton

HERE = Path(__file__).parent
LAYERS = [name for name, ex in EXERCISES.items() if not ex.function]


def _generator():
    spec = importlib.util.spec_from_file_location("practice_bugs_generate_modes",
                                                  HERE / "practice_bugs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def bug(tmp_path, mistake, exercise, k=0, extra=""):
    """A file: the reference answer of ``exercise`` with a catalogued mistake, plus ``extra``."""
    path = tmp_path / f"my_{exercise}.py"  # the name says nothing of the mistake
    path.write_text(_generator().bug_source(BY_ID[mistake], exercise, k) + extra)
    return path


def without_backward(source, class_name):
    """``source`` with the backward method of ``class_name`` taken out."""
    tree = ast.parse(source)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name)
    method = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "backward")
    lines = source.splitlines(keepends=True)
    return "".join(lines[:method.lineno - 1] + lines[method.end_lineno:])


def narrow(text, width=80):
    return [line for line in text.splitlines() if len(line) > width]


def statuses(report, backward):
    return {c.status for c in report.checks if c.backward == backward}


# --- forward-only skeletons -----------------------------------------------------------------
@pytest.mark.parametrize("name", LAYERS)
def test_forward_only_skeleton_has_no_backward_and_its_example_holds(name):
    text = skeleton(name, "my_file.py", forward_only=True)
    tree = ast.parse(text)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef)
               and n.name == EXERCISES[name].class_name)
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    assert "forward" in methods and "backward" not in methods
    assert FORWARD_ONLY_FLAG in text and "forward only" in text.splitlines()[0]
    doc = ast.get_docstring(tree, clean=False)
    assert "Forward only: this file asks for ``forward`` alone" in doc
    full = ast.get_docstring(ast.parse(skeleton(name)), clean=False)
    assert "Fill in ``forward`` and ``backward``" in full and "Fill in ``forward`` and" not in doc
    examples = doctest.DocTestParser().get_examples(doc)
    assert not any("backward" in e.source or ".grad" in e.source for e in examples)
    ns = {}  # the worked example that is left passes on the reference answer
    exec(solution_source(name), ns)
    runner = doctest.DocTestRunner(verbose=False)
    runner.run(doctest.DocTestParser().get_doctest(doc, ns, name, None, 0), out=lambda s: None)
    assert runner.failures == 0 and runner.tries >= 2


def test_the_full_skeleton_is_unchanged_by_the_forward_only_machinery():
    for name in EXERCISES:
        text = skeleton(name, "x.py")
        assert "FORWARD_ONLY" not in text and "x.py" in text and "THIS_FILE" not in text


def test_new_forward_only_writes_the_forward_alone(tmp_path, capsys):
    assert main(["practice", "new", "layernorm", "--forward-only", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fill in forward," in out
    written = (tmp_path / "my_layernorm.py").read_text()
    assert written == skeleton("layernorm", tmp_path / "my_layernorm.py", forward_only=True)
    assert main(["practice", "check", str(tmp_path / "my_layernorm.py")]) == 1  # its TODO
    out = capsys.readouterr().out
    assert "TODO" in out and "Not implemented yet: forward " in out
    assert "FAIL" not in out and "not asked" in out


def test_a_function_exercise_has_no_forward_only_version(tmp_path, capsys):
    assert main(["practice", "new", "fold_batchnorm", "--forward-only", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "fold_batchnorm is a function with no backward" in err and not narrow(err)
    assert not (tmp_path / "my_fold_batchnorm.py").exists()
    with pytest.raises(NoForwardOnly):
        skeleton("fold_batchnorm", forward_only=True)
    answer = tmp_path / "fold.py"
    answer.write_text(solution_source("fold_batchnorm"))
    assert main(["practice", "check", str(answer), "--forward-only"]) == 2
    assert "forward-only grading does not apply" in capsys.readouterr().out
    answer.write_text(solution_source("fold_batchnorm") + "\nFORWARD_ONLY = True\n")
    with pytest.raises(CannotGrade, match="function with no backward"):
        grade_file(answer)


# --- forward-only grading ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["layernorm", "batchnorm", "dropout", "cross_entropy",
                                  "sync_batchnorm", "mlp_with_batchnorm"])
def test_a_correct_forward_only_answer_passes_with_the_backward_not_asked(name, tmp_path):
    """Without a backward method, every forward check passes, even those a probe records after
    its backward (BatchNorm's running statistics after an evaluation step, SyncBatchNorm's)."""
    answer = tmp_path / f"{name}.py"
    answer.write_text(without_backward(solution_source(name), EXERCISES[name].class_name))
    report = grade_file(answer)
    assert report.passed and report.forward_only == "the class has no backward method"
    assert statuses(report, backward=True) == {NOT_ASKED}
    assert statuses(report, backward=False) == {"pass"}
    (tmp_path / "full.py").write_text(solution_source(name))
    full = grade_file(tmp_path / "full.py")
    assert [c.label for c in full.checks] == [c.label for c in report.checks]
    assert [c.label for c in report.checks if c.status == "pass"] == [
        c.label for c in full.checks if not is_backward(c.row)]
    text = format_report(report)
    assert "All forward checks pass (the backward was not asked)." in text
    assert "not asked (forward only)" in text and not narrow(text)


def test_forward_only_flag_in_the_file_or_on_the_command_line(tmp_path, capsys):
    """FORWARD_ONLY = True (or --forward-only) grades the forward alone even when the backward
    is there, and a broken backward is then never called."""
    source = solution_source("layernorm")
    flagged = tmp_path / "flagged.py"
    flagged.write_text(source + "\nFORWARD_ONLY = True\n")
    report = grade_file(flagged)
    assert report.passed and report.forward_only == "FORWARD_ONLY = True in the file"
    broken = tmp_path / "broken_backward.py"
    broken.write_text(source.replace("    def backward(self, dy):",
                                     "    def backward(self, dy):\n        raise RuntimeError('no')", 1))
    assert not grade_file(broken).passed
    assert main(["practice", "check", str(broken), "--forward-only"]) == 0
    out = capsys.readouterr().out
    assert "Forward only (--forward-only)" in out and "RuntimeError" not in out
    rows = grade_many([str(flagged), str(broken)], forward_only=True)
    assert all(r.passed and r.checks_passed == r.checks_total for r in rows)


def test_a_forward_mistake_is_still_named_and_the_backward_never_fails(tmp_path):
    path = bug(tmp_path, "ln-over-batch", "layernorm", extra="\nFORWARD_ONLY = True\n")
    report = grade_file(path)
    assert not report.passed and report.diagnosis_ids == ["ln-over-batch"]
    failing = [c for c in report.checks if c.status not in PASSING]
    assert failing and all(not c.backward and c.diagnoses == ["ln-over-batch"] for c in failing)
    assert statuses(report, backward=True) == {NOT_ASKED}


def test_a_backward_mistake_passes_when_only_the_forward_is_asked(tmp_path):
    path = bug(tmp_path, "backward-no-mean-term", "layernorm")
    assert grade_file(path).diagnosis_ids == ["backward-no-mean-term"]
    report = grade_file(path, forward_only=True)
    assert report.passed and not report.diagnosis_ids


# --- hint levels ------------------------------------------------------------------------------
@pytest.fixture
def buggy(tmp_path):
    return bug(tmp_path, "ln-over-batch", "layernorm")


def test_hint_levels_say_less_and_less(buggy, capsys):
    mistake = BY_ID["ln-over-batch"]
    texts = {}
    for level in ("full", "brief", "none"):
        assert main(["practice", "check", str(buggy), "--hints", level]) == 1
        texts[level] = capsys.readouterr().out
        assert not narrow(texts[level]) and "FAIL" in texts[level]
    assert texts["full"] == format_report(grade_file(buggy)) + "\n"  # the default: as before
    assert main(["practice", "check", str(buggy)]) == 1
    assert capsys.readouterr().out == texts["full"]
    flat = {level: " ".join(text.split()) for level, text in texts.items()}
    assert "hint:" in flat["full"] and mistake.id in flat["full"]
    assert mistake.id in flat["brief"] and mistake.title in flat["brief"]
    assert "shows in" in flat["brief"] and "(4, 6): forward" in flat["brief"]
    for word in ("hint:", "symptom:", "learn:", " ".join(mistake.hint.split()[:6])):
        assert word not in flat["brief"] and word not in flat["none"]
    for name in (mistake.id, mistake.title, "catalogued", "reproduces", "matches"):
        assert name not in flat["none"]
    assert "(hints: none; no mistake is named)" in flat["none"]


def test_hint_level_none_hides_the_names_in_the_class_table(buggy, tmp_path):
    answer = tmp_path / "good.py"
    answer.write_text(solution_source("layernorm"))
    rows = grade_many([str(answer), str(buggy)])
    shown = format_table(rows)
    assert shown == format_table(rows, hints="brief")
    assert "ln-over-batch" in shown
    hidden = format_table(rows, hints="none")
    assert "ln-over-batch" not in hidden and "mistakes named" not in hidden
    results = {line.split()[0]: line.split()[-1] for line in hidden.splitlines()
               if line.startswith(("good.py", buggy.name))}
    assert results == {"good.py": "pass", buggy.name: "fail"}
    with pytest.raises(ValueError, match="expected one of none, brief, full"):
        hint_level("some")


# --- mock interviews ------------------------------------------------------------------------
class FakeClock:
    """A clock that reads the given seconds, one per call."""

    def __init__(self, *readings):
        self.readings = list(readings)

    def __call__(self):
        return self.readings.pop(0)


class Candidate:
    """stdin of a candidate who writes ``source`` into the file, then presses Enter."""

    def __init__(self, folder, name, source):
        self.file, self.source = Path(folder) / f"my_{name}.py", source

    def readline(self):
        self.file.write_text(self.source)
        return "\n"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """$NORMCORE_HOME in a folder that does not exist yet (the history creates it); the tests
    run in tmp_path, so that the paths printed are short."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NORMCORE_HOME", "home/normcore")
    return tmp_path / "home" / "normcore"


def test_pick_draws_by_difficulty_and_is_seeded():
    easy = [interview.pick(difficulty="easy", seed=s).name for s in range(30)]
    assert {EXERCISES[n].difficulty for n in easy} == {1} and len(set(easy)) > 1
    assert easy == [interview.pick(difficulty="easy", seed=s).name for s in range(30)]
    assert all(not interview.pick(seed=s, forward_only=True).function for s in range(40))
    assert interview.pick("rmsnorm").name == "rmsnorm"
    for bad in ({"name": "nope"}, {"difficulty": "tricky"}, {"name": "batchnorm", "difficulty": "easy"}):
        with pytest.raises(interview.InterviewError):
            interview.pick(**bad)


def test_interview_in_time_with_a_correct_answer(tmp_path, home, monkeypatch, capsys):
    monkeypatch.setattr(interview, "CLOCK", FakeClock(100.0, 100.0 + 12 * 60))
    monkeypatch.setattr("sys.stdin", Candidate(tmp_path, "rmsnorm", solution_source("rmsnorm")))
    assert main(["practice", "interview", "rmsnorm", "--minutes", "20", "--dir", "."]) == 0
    out = capsys.readouterr().out
    assert "Mock interview: rmsnorm (easy), time box 20 min." in out
    assert "Done in 12.0 min, within the time box of 20 min." in out
    assert "All checks pass." in out and "Recorded in home/normcore/practice_history.jsonl" in out
    assert not narrow(out)
    (record,) = [json.loads(line) for line in (home / "practice_history.jsonl").read_text().splitlines()]
    expected = grade_file(tmp_path / "my_rmsnorm.py")
    assert record["exercise"] == "rmsnorm" and record["passed"] is True and record["mistakes"] == []
    assert record["checks_passed"] == record["checks_total"] == len(expected.checks)
    assert (record["time_box"], record["minutes_taken"], record["over_time"], record["ended"]) == (
        20.0, 12.0, False, "enter")
    assert record["file"] == "my_rmsnorm.py"
    datetime.fromisoformat(record["date"])  # a date, not checked against any clock


def test_a_pytorch_interview_writes_a_module_and_names_its_mistake_afterwards(tmp_path, home,
                                                                              monkeypatch, capsys):
    """--torch: the skeleton is an nn.Module; the candidate answers with torch.var's default
    Bessel correction; the interview names nothing, the history names torch-var-unbiased."""
    pytest.importorskip("torch")
    source = solution_source("torch/layernorm").replace(
        "x.var(dim=dims, unbiased=False, keepdim=True)", "x.var(dim=dims, keepdim=True)")
    candidate = Candidate(tmp_path, "layernorm", source)
    candidate.file = tmp_path / "my_layernorm_torch.py"
    monkeypatch.setattr(interview, "CLOCK", FakeClock(0.0, 10 * 60.0))
    monkeypatch.setattr("sys.stdin", candidate)
    assert main(["practice", "interview", "layernorm", "--torch", "--dir", "."]) == 1
    out = capsys.readouterr().out
    assert "fill in forward. PyTorch, autograd for the backward" in " ".join(out.split())
    assert "FAIL" in out and "torch-var-unbiased" not in out and not narrow(out)
    (attempt,), problems = history.load()
    assert not problems and attempt.torch and attempt.mistakes == ["torch-var-unbiased"]
    assert "[PyTorch]" in history.format_history([attempt])


def test_interview_over_time_names_no_mistake_but_the_history_does(tmp_path, home, monkeypatch,
                                                                    capsys):
    source = _generator().bug_source(BY_ID["ln-over-batch"], "layernorm", 0)
    monkeypatch.setattr(interview, "CLOCK", FakeClock(0.0, 25 * 60.0))
    monkeypatch.setattr("sys.stdin", Candidate(tmp_path, "layernorm", source))
    assert main(["practice", "interview", "layernorm", "--minutes", "20", "--dir", "."]) == 1
    out = capsys.readouterr().out
    assert "Done in 25.0 min: over the time box of 20 min by 5.0 min." in out
    assert "FAIL" in out and "ln-over-batch" not in out and "hint:" not in out
    assert not narrow(out)
    (attempt,), problems = history.load()
    assert not problems and attempt.over_time and attempt.mistakes == ["ln-over-batch"]
    assert main(["practice", "history"]) == 0
    table = capsys.readouterr().out
    assert "ln-over-batch" in table and "25/20 min over" in table and not narrow(table)


def test_interview_with_stdin_closed_grades_the_untouched_skeleton(tmp_path, home, monkeypatch,
                                                                   capsys):
    monkeypatch.setattr(interview, "CLOCK", FakeClock(5.0, 5.0))
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    args = ["practice", "interview", "--difficulty", "easy", "--seed", "4", "--dir", "."]
    assert main(args) == 1
    out = capsys.readouterr().out
    name = interview.pick(difficulty="easy", seed=4).name
    assert f"Mock interview: {name} (easy), time box {EXERCISES[name].minutes} min." in out
    assert "TODO" in out and "within the time box" in out
    (attempt,), _ = history.load()
    assert attempt.exercise == name and attempt.not_implemented and not attempt.passed
    assert main(args) == 1  # the skeleton is there: not overwritten without --force
    assert "already exists" in capsys.readouterr().err
    monkeypatch.setattr(interview, "CLOCK", FakeClock(5.0, 5.0))
    assert main(args + ["--force", "--no-wait"]) == 1
    assert len(history.load()[0]) == 2 and history.load()[0][1].ended == "no wait"


def test_when_the_time_is_up_the_file_is_graded_as_it_is(tmp_path, home):
    read, write = os.pipe()  # a stdin on which nobody presses Enter
    stdin = os.fdopen(read, "r")
    try:
        assert interview.wait_for_enter(stdin, 0.01) is False
        attempt, report = interview.interview(
            EXERCISES["softmax"], minutes=0.001, folder=tmp_path, stdin=stdin,
            clock=FakeClock(0.0, 0.06), out=lambda *a: None, history_path=home / "h.jsonl")
        assert attempt.ended == "time up" and attempt.over_time
        assert report.not_implemented == ["forward", "backward"]
    finally:
        os.close(write)  # end of input: the two reading threads end, then stdin can close
        stdin.close()
    assert interview.wait_for_enter(io.StringIO(""), 5.0) is True  # end of input: done


def test_forward_only_interview(tmp_path, home, monkeypatch, capsys):
    answer = without_backward(solution_source("softmax"), "Softmax") + "\n" + FORWARD_ONLY_FLAG
    monkeypatch.setattr(interview, "CLOCK", FakeClock(0.0, 60.0))
    monkeypatch.setattr("sys.stdin", Candidate(tmp_path, "softmax", answer))
    assert main(["practice", "interview", "softmax", "--forward-only", "--dir", "."]) == 0
    assert "All forward checks pass" in capsys.readouterr().out
    (attempt,), _ = history.load()
    assert attempt.forward_only and attempt.passed
    assert main(["practice", "interview", "fold_batchnorm", "--forward-only",
                 "--dir", "."]) == 2


@pytest.mark.parametrize("minutes", ["0", "-5", "abc", "100000"])
def test_a_time_box_that_is_not_a_positive_number_is_refused(minutes, tmp_path, home, capsys):
    with pytest.raises(SystemExit) as done:
        main(["practice", "interview", "rmsnorm", "--minutes", minutes, "--dir", "."])
    assert done.value.code == 2
    assert "argument --minutes: expected a" in capsys.readouterr().err
    assert not (tmp_path / "my_rmsnorm.py").exists() and not home.exists()


def test_an_unknown_exercise_or_a_wrong_difficulty_is_refused(tmp_path, home, capsys):
    with pytest.raises(SystemExit) as done:
        main(["practice", "interview", "layer_norm", "--dir", "."])
    assert done.value.code == 2 and "invalid choice: 'layer_norm'" in capsys.readouterr().err
    assert main(["practice", "interview", "batchnorm", "--difficulty", "easy",
                 "--dir", "."]) == 2
    err = capsys.readouterr().err
    assert "batchnorm is hard, not easy" in err and not narrow(err)
    assert not list(tmp_path.glob("my_*.py")) and not home.exists()


# --- the history ----------------------------------------------------------------------------
def attempt(exercise, passed_checks, taken, box=20.0, mistakes=(), day=1):
    return history.Attempt(f"2026-01-{day:02d}T10:00:00+00:00", exercise, f"my_{exercise}.py", box,
                           taken, taken > box, "enter", passed=passed_checks == 30,
                           checks_passed=passed_checks, checks_total=30, mistakes=list(mistakes))


def test_history_table_and_progress_per_exercise(home, capsys):
    assert main(["practice", "history"]) == 0
    assert "No mock interviews recorded yet" in capsys.readouterr().out
    for a in (attempt("layernorm", 12, 25.0, mistakes=["ln-over-batch", "eps-outside-sqrt"]),
              attempt("softmax", 30, 9.0, day=2),
              attempt("layernorm", 30, 14.0, day=3),
              attempt("layernorm", 24, 11.0, mistakes=["grad-assigned"], day=4)):
        path = history.append(a)
    assert path.resolve() == home / "practice_history.jsonl" and len(path.read_text().splitlines()) == 4
    with path.open("a") as f:
        f.write("not json\n")
    assert main(["practice", "history"]) == 0
    captured = capsys.readouterr()
    assert "line 5 of" in captured.err and "skipped" in captured.err
    out = captured.out
    assert not narrow(out)
    assert "2026-01-01 10:00" in out and "25/20 min over" in out and "ln-over-batch" in out
    progress = out[out.index("Progress per exercise"):].splitlines()
    layernorm = next(line for line in progress if line.startswith("layernorm")).split()
    assert layernorm[:2] == ["layernorm", "3"]
    assert " ".join(layernorm[2:]) == "12/30 in 25 min 24/30 in 11 min 30/30 in 14 min"
    assert main(["practice", "history", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == str(path) and len(data["attempts"]) == 4
    by_name = {p["exercise"]: p for p in data["progress"]}
    assert by_name["layernorm"]["attempts"] == 3 and by_name["softmax"]["attempts"] == 1
    assert [by_name["layernorm"][k]["checks_passed"] for k in ("first", "latest", "best")] == [12, 24, 30]


def test_history_lives_in_normcore_home_or_the_user_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "elsewhere"))
    assert history.history_file() == tmp_path / "elsewhere" / "practice_history.jsonl"
    monkeypatch.delenv("NORMCORE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history.history_file() == tmp_path / ".normcore" / "practice_history.jsonl"
    assert history.load() == ([], [])


@pytest.mark.parametrize("action", ["interview", "history"])
def test_the_new_subcommands_help_has_a_description_and_an_example(action, capsys):
    with pytest.raises(SystemExit) as done:
        main(["practice", action, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    usage, description = out.split("\n\n")[:2]
    assert len(description.split()) >= 8
    assert f"example:\n  normcore practice {action}" in out
    assert not narrow(out)


def test_the_new_flags_are_in_the_help_with_an_example(capsys):
    for action, flags in (("new", ["--forward-only"]), ("check", ["--forward-only", "--hints"])):
        with pytest.raises(SystemExit):
            main(["practice", action, "--help"])
        out = capsys.readouterr().out
        assert all(flag in out for flag in flags) and not narrow(out)
        assert "e.g." in out

