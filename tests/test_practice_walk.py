"""The walk of an answer through ``practice check``: which rooms (normcore.practice modules) it
enters, and by how many entrances.

An entrance of a room is one of its functions called from another room while a file is graded
(``grade_file``, run in this process: the child's work and the grader's); calls inside a probe's
run (``probes.run_probe``: the probe drives the answer through its driver) are the probe's,
and a dataclass's generated methods are left out. The tracks are entered through their one
interface (``tracks.exam``, and ``tracks.preload`` before the answer's process is forked), never
by the grader asking a track one question after another; and no room is entered through more
than two of its functions (the child's messages to the grader go through one: ``runs.run_answer``
tells them, ``sandbox._Messenger`` sends them).
"""

import collections
import os
import sys
from pathlib import Path

import pytest

from normcore.practice import grader, probes, tracks

SOLUTIONS = Path(__file__).resolve().parent.parent / "normcore" / "practice" / "solutions"


def walk(path, monkeypatch):
    """(the Report, {room: {functions entered from another room}}) of grading ``path``."""
    entered = collections.defaultdict(set)
    inside = [0]  # how deep in probes.run_probe

    def room(frame):
        name = frame.f_globals.get("__name__", "") if frame is not None else ""
        return name if name.startswith("normcore.practice") else None

    def hook(frame, event, arg):
        if frame.f_code is probes.run_probe.__code__:
            inside[0] += {"call": 1, "return": -1}.get(event, 0)
            if event != "call" or inside[0] > 1:
                return
        elif event != "call" or inside[0]:
            return
        callee, caller = room(frame), room(frame.f_back)
        if callee and caller and callee != caller and "__create_fn__" not in frame.f_code.co_qualname:
            entered[callee].add(frame.f_code.co_qualname)

    tracks.preload(path)  # torch's imports and first backward, once, before the walk is measured
    monkeypatch.delattr(os, "fork", raising=False)  # the child's work too, in this process
    sys.setprofile(hook)
    try:
        report = grader.grade_file(path)
    finally:
        sys.setprofile(None)
    return report, entered


def assert_each_room_entered_once_or_twice(entered):
    """Every room of normcore.practice the walk enters, through one or two of its functions."""
    wide = {room: sorted(functions) for room, functions in entered.items() if len(functions) > 2}
    assert not wide, f"rooms entered through more than two functions: {wide}"


@pytest.mark.parametrize("answer", ["layernorm.py", "batchnorm.py"])  # batchnorm: running statistics
def test_a_numpy_answer_enters_the_tracks_once_through_their_interface(answer, monkeypatch):
    report, entered = walk(SOLUTIONS / answer, monkeypatch)
    assert report.passed
    assert entered["normcore.practice.tracks"] <= {"exam", "preload"}, entered["normcore.practice.tracks"]
    assert "normcore.practice.torch_track" not in entered
    assert_each_room_entered_once_or_twice(entered)


def test_a_torch_answer_enters_its_track_once_through_the_interface(monkeypatch):
    pytest.importorskip("torch")
    report, entered = walk(SOLUTIONS / "torch" / "fold_batchnorm.py", monkeypatch)  # cheap: a function
    assert report.passed
    assert entered["normcore.practice.tracks"] <= {"exam", "preload"}
    assert entered["normcore.practice.torch_track"] <= {"TorchTrack.exam", "TorchTrack.prepare"}
    assert_each_room_entered_once_or_twice(entered)
