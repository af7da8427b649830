"""A candidate's file runs apart from the grader (``normcore/practice/sandbox.py``).

A folder holding a hang, a crash, an exit, an ``os._exit``, a memory hog and a print flood is
graded file by file: every other file gets the verdict it gets in the grader's own process,
and each of those six a row that says what happened, where. Paths that cannot be read or
written are refused before any work (exit status 2, one line, no traceback), and Ctrl-C ends
a command with one line and exit status 130, leaving no process behind.

Time limits here are short (1 or 2 s) so that the tests stay quick; no test asserts on how
long anything takes.
"""

import json
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from normcore.cli import main
from normcore.practice import CannotGrade, grade, grade_file
from normcore.practice.classroom import grade_many
from normcore.practice.diagnosis import _same
from normcore.practice.driver import ContractError, NotApplicable
from normcore.practice.exercises import EXERCISES
from normcore.practice.loading import RaisedError, describe_error, find_class, load_module
from normcore.practice.mutants import solution_source
from normcore.practice.probes import ProbeRun, error_kind
from normcore.practice.report import format_report
from normcore.practice.sandbox import Limits, _Unpickler
from normcore.practice.tracks import NUMPY, TRACKS, track_for

ROOT = Path(__file__).parent.parent
RMSNORM = solution_source("rmsnorm")
STOPPED_IN = "(2, 3, 5), rank 3"  # the second probe of rmsnorm: the first one's input is 2-D
QUICK = Limits(timeout=2.0, memory=512 << 20)


def _answer(folder, name, code, method="forward"):
    """The reference RMSNorm with ``code`` run first in ``method`` on the probes' 3-D input
    (the first probe, on a 2-D input, runs as usual)."""
    head = f"    def {method}(self, {'x' if method == 'forward' else 'dy'}):\n"
    guard = "x" if method == "forward" else "dy"
    body = f"        if {guard}.ndim == 3:\n" + "".join(f"            {line}\n" for line in code.splitlines())
    source = RMSNORM.replace("import numpy as np\n", "import os\nimport signal\nimport sys\n\n"
                             "import numpy as np\n", 1).replace(head, head + body)
    path = folder / f"{name}.py"
    path.write_text(source)
    return path


STOPS = {  # file -> (code, method, what the row says)
    "hang": ("while True:\n    pass", "forward", f"timed out after 2 s in forward, probe {STOPPED_IN}"),
    "crash": ("os.kill(os.getpid(), signal.SIGSEGV)", "forward",
              f"crashed (SIGSEGV: Segmentation fault) in forward, probe {STOPPED_IN}"),
    "exits": ("sys.exit(3)", "backward", f"the process exited (sys.exit(3)) in backward, probe {STOPPED_IN}"),
    "os_exit": ("os._exit(0)", "forward", f"the process exited with status 0 in forward, probe {STOPPED_IN}"),
    "hog": ("big = np.ones(20 * 10**9 // 8)", "forward",
            f"ran out of memory (limit 512 MiB) in forward, probe {STOPPED_IN}"),
    "flood": ("while True:\n    print('x' * 10**6)", "forward",
              f"printed more than 4 MiB of output in forward, probe {STOPPED_IN}"),
}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A class's folder: a correct answer, a catalogued mistake, and the six that stop."""
    folder = tmp_path_factory.mktemp("classroom")
    (folder / "good.py").write_text(RMSNORM)
    (folder / "mistake.py").write_text(RMSNORM.replace("rrms = 1.0 / np.sqrt(ms + eps)",
                                                        "rrms = 1.0 / (np.sqrt(ms) + eps)"))
    for name, (code, method, _) in STOPS.items():
        _answer(folder, name, code, method)
    return folder


def _in_process(path):
    """The file graded in this process (its class given directly), as a test may."""
    cls = find_class(load_module(path))
    return grade(cls, EXERCISES["rmsnorm"], path)


def _checks(checks):
    return [(c.label, c.status, c.diagnoses, c.note, c.error) for c in checks]


def test_a_folder_with_a_hang_a_crash_exits_a_hog_and_a_flood_grades_every_other_file(
        classroom, tmp_path, capsys):
    target = tmp_path / "results.json"
    status = main(["practice", "check", str(classroom), "--timeout", "2", "--memory", "0.5",
                   "--json", str(target)])
    out, err = capsys.readouterr()
    assert status == 1 and err == ""  # graded: every file fails but one, none "cannot be graded"
    assert "Traceback" not in out and all(len(line) <= 80 for line in out.splitlines())
    records = {Path(r["file"]).stem: r for r in json.loads(target.read_text())}
    assert set(records) == {"good", "mistake", *STOPS}
    for name in ("good", "mistake"):  # the same verdict as in the grader's own process
        report = _in_process(classroom / f"{name}.py")
        record = records[name]
        assert record["stopped"] is None and record["error"] is None
        assert (record["passed"], record["mistakes"], record["variants"], record["checks_passed"]) == (
            report.passed, report.mistake_ids, report.variants,
            sum(c.status == "pass" for c in report.checks))
    # eps outside the root is RMSNorm's original code: a published variant, not a mistake
    assert records["good"]["passed"] and records["mistake"]["variants"] == ["eps-outside-sqrt"]
    first = sum(c.probe == EXERCISES["rmsnorm"].probes[0].label
                for c in _in_process(classroom / "good.py").checks)
    for name, (_, _, says) in STOPS.items():
        record = records[name]
        assert record["stopped"] == says, name
        assert not record["passed"] and record["mistakes"] == [] and record["error"] is None
        assert record["checks_passed"] == first  # the first probe, before the event, passes
    flat = " ".join(out.split())
    for says in (s for _, _, s in STOPS.values()):
        assert " ".join(says.split()) in flat
    assert "8 files: 1 pass, 7 fail" in out


def test_the_probes_before_are_graded_the_one_it_stopped_in_says_what_happened(classroom):
    report = grade_file(classroom / "hang.py", limits=Limits(timeout=1.0))
    good = _in_process(classroom / "good.py")
    probes = [p.label for p in EXERCISES["rmsnorm"].probes]
    before = [c for c in report.checks if c.probe == probes[0]]
    assert before and _checks(before) == _checks(c for c in good.checks if c.probe == probes[0])
    stopped = [c for c in report.checks if c.probe == probes[1]]
    assert report.stopped == f"timed out after 1 s in forward, probe {STOPPED_IN}"
    assert stopped and all(c.status == "ERROR" and c.note == report.stopped for c in stopped)
    later = [c for c in report.checks if c.probe in probes[2:]]
    assert later and all(c.status == "ERROR" and c.note.startswith("not run") for c in later)
    assert len(report.checks) == len(good.checks) and not report.passed and not report.diagnosis_ids
    text = format_report(report)
    assert report.stopped in " ".join(text.split()) and all(len(line) <= 80 for line in text.splitlines())


@pytest.mark.parametrize("name", ["good", "mistake"])
def test_a_file_gets_the_same_checks_from_its_process_as_in_the_graders(classroom, name):
    path = classroom / f"{name}.py"
    assert _checks(grade_file(path).checks) == _checks(_in_process(path).checks)


def test_a_crash_is_run_once_more_and_reported_only_when_it_happens_again(tmp_path):
    """A child that crashes once (as a torch child forked from a grader whose thread pools ran
    can, through no fault of the answer) is run again and graded on the second run; an answer
    that always crashes is reported as crashed (``classroom``'s "crash")."""
    marker = tmp_path / "crashed-once"
    once = _answer(tmp_path, "crash_once", f"if not os.path.exists({str(marker)!r}):\n"
                                           f"    open({str(marker)!r}, 'w').close()\n"
                                           f"    os.kill(os.getpid(), signal.SIGSEGV)")
    report = grade_file(once)
    assert marker.exists() and report.passed, [(c.label, c.note) for c in report.checks if c.status != "pass"]
    always = _answer(tmp_path, "crash_always", STOPS["crash"][0])
    report = grade_file(always, limits=QUICK)
    assert not report.passed and STOPS["crash"][2] in [c.note for c in report.checks]


def test_an_answer_that_raises_is_reported_as_in_process(tmp_path):
    """The exception crosses as a record: its type, message and line; a TODO stays a TODO."""
    path = tmp_path / "raises.py"
    path.write_text(RMSNORM.replace("x_hat = x * rrms ", "x_hat = x * rrms[0, 0, 0] "))
    assert _checks(grade_file(path).checks) == _checks(_in_process(path).checks)
    assert any("IndexError" in c.note and "raises.py line" in c.note for c in grade_file(path).checks)
    skeleton = tmp_path / "my_rmsnorm.py"
    assert main(["practice", "new", "rmsnorm", "--dir", str(tmp_path)]) == 0
    report = grade_file(skeleton)
    assert report.not_implemented == ["forward", "backward"]
    assert {c.status for c in report.checks} == {"TODO"}


def test_a_record_of_an_error_is_read_as_the_error_it_stands_for(tmp_path):
    path = tmp_path / "answer.py"
    path.write_text("def forward():\n    raise NotImplementedError('TODO')\n")
    namespace = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    try:
        namespace["forward"]()
    except NotImplementedError as e:
        raised = e
    record = _Unpickler.loads(pickle.dumps(RaisedError.record(raised, path)))
    assert isinstance(record, NotImplementedError) and str(record) == "TODO"
    assert error_kind(record) == error_kind(raised) == "builtins.NotImplementedError"
    assert describe_error(record, path) == describe_error(raised, path) == (
        "NotImplementedError: TODO (answer.py line 2, in forward)")
    for error in (NotApplicable("x"), ContractError("x"), TypeError("x")):
        record = RaisedError.record(error)
        assert error_kind(record) == error_kind(error) and str(record) == "x"
        for kind in (NotImplementedError, NotApplicable, ContractError):  # what the grader asks
            assert isinstance(record, kind) == isinstance(error, kind)
    # the diagnosis's rule: the mutant raises the same type of exception at the same point
    assert _same(ProbeRun({}, RaisedError.record(TypeError("a"))), ProbeRun({}, TypeError("b")))
    assert not _same(ProbeRun({}, RaisedError.record(TypeError("a"))), ProbeRun({}, ValueError("a")))


def test_the_grader_reads_only_plain_values_from_an_answers_process(tmp_path):
    class Payload:
        def __reduce__(self):
            return (os.system, ("echo read",))
    with pytest.raises(pickle.UnpicklingError):
        _Unpickler.loads(pickle.dumps(Payload()))
    plain = {"y": np.ones((2, 3), np.float32), "n": np.float64(2.5), "s": "float32", "t": (1, 2.0)}
    assert _Unpickler.loads(pickle.dumps(plain))["t"] == (1, 2.0)
    path = tmp_path / "odd.py"  # a forward returning an object of the file's own class
    path.write_text(RMSNORM.replace("        return y.astype(x.dtype)\n",
                                    "        return Parameter(y)\n"))
    report = grade_file(path)
    assert not report.passed and "FAIL" in {c.status for c in report.checks}


def test_what_the_file_prints_never_reaches_the_report_or_the_json(tmp_path, capfd):
    path = tmp_path / "chatty.py"
    path.write_text("import os\nprint('hello at import')\n" + RMSNORM.replace(
        "    def forward(self, x):\n",
        "    def forward(self, x):\n        os.write(1, b'raw bytes on fd 1\\n')\n"
        "        print('in forward', file=__import__('sys').stderr)\n"))
    assert main(["practice", "check", str(path), "--json", "-"]) == 0
    out, err = capfd.readouterr()
    [record] = json.loads(out)
    assert record["passed"] and err == ""
    report = grade_file(path)
    assert report.output.startswith("hello at import\n") and "raw bytes on fd 1" in report.output
    assert main(["practice", "check", str(path)]) == 0  # the report ends with the first lines
    out = capfd.readouterr().out
    assert out.startswith(format_report(report)) and out.endswith(
        "What the file printed while it was graded:\n    hello at import\n    raw bytes on fd 1\n"
        "    in forward\n    raw bytes on fd 1\n    in forward\n    ... and more\n")


def test_a_file_that_stops_after_the_probes_gets_a_check_that_says_where(tmp_path):
    """The skeleton's TODOs are looked for once the probes are done, on the example input."""
    path = tmp_path / "todo_hangs.py"
    path.write_text(RMSNORM.replace("    def forward(self, x):\n", (
        "    def forward(self, x):\n"
        "        if np.array_equal(x, np.random.default_rng(0).standard_normal((4, 6))):\n"
        "            while True:\n"
        "                pass\n")))
    report = grade_file(path, limits=Limits(timeout=1.0))
    assert report.stopped == "timed out after 1 s while looking for the skeleton's TODOs"
    *probes, last = report.checks
    assert all(c.status == "pass" for c in probes)
    assert len(probes) == len(_in_process(ROOT / "normcore/practice/solutions/rmsnorm.py").checks)
    assert (last.status, last.note) == ("ERROR", report.stopped) and not report.passed


def test_a_file_that_stops_while_it_is_imported_cannot_be_graded(tmp_path):
    path = tmp_path / "loops.py"
    path.write_text("while True:\n    pass\n")
    with pytest.raises(CannotGrade, match="timed out after 1 s while importing the file"):
        grade_file(path, limits=Limits(timeout=1.0))


def test_no_process_is_left_behind(classroom, monkeypatch):
    forked = []
    fork = os.fork

    def recorded():
        pid = fork()
        if pid:
            forked.append(pid)
        return pid
    monkeypatch.setattr(os, "fork", recorded)
    grade_many([str(classroom / f"{name}.py") for name in ("hang", "crash", "good")],
               limits=Limits(timeout=1.0))
    assert len(forked) == 4  # the crash is run twice (run_file)
    for pid in forked:  # each reaped: no zombie, nothing running
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_the_tracks_answer_the_same_questions():
    for track in TRACKS.values():
        for question in ("exam", "prepare"):
            assert callable(getattr(track, question)), (track.name, question)
        assert TRACKS[track.name] is track and isinstance(track.imports, str)
    assert track_for(find_class(load_module(ROOT / "normcore/practice/solutions/rmsnorm.py"))) is NUMPY


# --- paths: refused before any work ---------------------------------------------------------------
def _unwrapped(text):
    """``text`` without its white space: a long path is wrapped at 80 columns, even mid-name."""
    return "".join(text.split())


def test_an_answer_in_a_file_not_ending_in_py_is_graded(tmp_path, capsys):
    path = tmp_path / "answer.txt"
    path.write_text(RMSNORM)
    assert main(["practice", "check", str(path)]) == 0
    assert "All checks pass." in capsys.readouterr().out


@pytest.mark.parametrize("option", ["--json", "--csv"])
def test_an_output_that_cannot_be_written_is_refused_before_grading(classroom, tmp_path, option, capsys):
    good = str(classroom / "good.py")
    for target in ("/nonexistent/x.out", str(classroom / "good.py" / "x.out"), str(tmp_path)):
        assert main(["practice", "check", good, option, target]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith("error:") and "Traceback" not in err
        assert _unwrapped(err) in map(_unwrapped, (
            f"error: cannot write {target}: there is no folder {Path(target).parent}",
            f"error: {target} is a folder, not a file"))
    # refused for the other option: the one that could be written is not left behind, empty
    fine = tmp_path / "results.out"
    other = "--csv" if option == "--json" else "--json"
    assert main(["practice", "check", good, option, str(fine), other, "/nonexistent/y"]) == 2
    assert not fine.exists()
    capsys.readouterr()
    assert main(["practice", "check", good, option, str(fine)]) == 0 and fine.read_text()


def test_an_answer_that_cannot_be_read_is_refused(tmp_path, capsys):
    assert main(["practice", "check", str(tmp_path / "missing.py")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and _unwrapped(err) == _unwrapped(f"error: {tmp_path / 'missing.py'}: no such file or folder")


@pytest.mark.parametrize("command", [["practice", "new", "rmsnorm"],
                                     ["practice", "interview", "rmsnorm", "--no-wait"]])
def test_a_dir_that_cannot_be_written_is_refused(tmp_path, command, capsys, monkeypatch):
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    (tmp_path / "a_file").write_text("")
    assert main([*command, "--dir", str(tmp_path / "a_file" / "sub")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and _unwrapped(err) == _unwrapped(f"error: {tmp_path / 'a_file'} is not a folder")
    assert not (tmp_path / "home").exists()


@pytest.mark.parametrize("command", [["practice", "new", "rmsnorm"],
                                     ["practice", "interview", "rmsnorm", "--no-wait"]])
def test_a_dir_no_check_can_see_through_is_refused_when_it_is_made(tmp_path, command, capsys,
                                                                    monkeypatch):
    """A folder whose making fails although its ancestor looks writable (root may write in
    /proc, but nothing can be made there): one line and exit 2, not a traceback."""
    from normcore.practice import skeletons

    def refused(*args, **kwargs):
        raise FileNotFoundError(2, "No such file or directory", str(tmp_path / "x"))
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(skeletons, "write", refused)
    assert main([*command, "--dir", str(tmp_path / "x")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and _unwrapped(err) == _unwrapped(f"error: cannot write in {tmp_path / 'x'}")


def test_interview_takes_a_timeout(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("NORMCORE_HOME", str(tmp_path / "home"))
    assert main(["practice", "interview", "rmsnorm", "--no-wait", "--dir", str(tmp_path),
                 "--timeout", "1"]) == 1
    assert "Not implemented yet" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["practice", "interview", "rmsnorm", "--no-wait", "--timeout", "0"])
    assert "--timeout" in capsys.readouterr().err


# --- Ctrl-C ------------------------------------------------------------------------------------------
def test_ctrl_c_in_any_command_is_one_line_and_exit_130(monkeypatch, capsys):
    from normcore.commands.practice_actions import ACTIONS

    def interrupted(args):
        raise KeyboardInterrupt
    monkeypatch.setitem(ACTIONS, "list", interrupted)
    assert main(["practice", "list"]) == 130
    out, err = capsys.readouterr()
    assert out == "" and err == "normcore: interrupted\n"


def test_ctrl_c_while_a_file_hangs_kills_its_process_and_exits_130(tmp_path):
    marker = tmp_path / "running"
    path = tmp_path / "hangs.py"
    path.write_text(RMSNORM.replace("import numpy as np\n", "import os\n\nimport numpy as np\n", 1).replace(
        "    def forward(self, x):\n",
        f"    def forward(self, x):\n        open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "        while True:\n            pass\n"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    # Ctrl-C in a terminal reaches a process whose SIGINT is the default; a test runner started
    # in the background by a non-interactive shell has it ignored, and its children inherit that
    process = subprocess.Popen([sys.executable, "-m", "normcore", "practice", "check", str(path),
                                "--timeout", "600"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, cwd=tmp_path,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        while not (marker.exists() and marker.read_text()):  # the child is in the forward
            assert process.poll() is None, process.communicate()
            time.sleep(0.05)
        child = int(marker.read_text())
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130 and out == ""
    assert err == "normcore: interrupted\n"
    assert not _running(child)


def _running(pid):
    """Whether process ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    if state != "Z":
        os.kill(pid, signal.SIGKILL)  # not left spinning after the test either
    return state != "Z"
