"""The tracks of interview practice: how the grader drives an answer, whatever it is written in.

A NumPy answer (``NUMPY``) writes its forward and its backward by hand and is driven through
the practice contract (``driver.Driver``); a torch.nn.Module (``torch_track.TRACK``) writes a
forward only, and its gradients come from autograd. A track answers one question, ``exam``:
for an exercise, the ``runs.Exam`` every answer on it is graded by (the probes, how to drive
the answer, whether its backward is written by hand, the reference and the mutants). The
grader reaches the tracks through two doors only: ``exam(answer, exercise)`` (in the process
that runs the answer, and in the grader for its reference and mutants) and ``preload(path)``
(before a process is forked for a file); the grader, the diagnosis and the report never ask
which track an answer is on.

A track has ``name`` (how the process that ran an answer names it to the grader),
``exam(exercise)``, ``imports`` (the top-level package whose import in a file says that the
file may be on it; "" for NumPy's) and ``prepare()`` (load, in the grader, what its answers
need, before a process to run one is forked from it).
"""

import functools
import re
import types
from pathlib import Path

from .driver import maker
from .loading import is_torch_module
from .mutants import Mutants
from .runs import Exam
from .torch_track import TRACK as TORCH


class NumpyTrack:
    """A layer written to the practice contract in NumPy: forward and backward by hand."""

    name = "numpy"
    imports = ""

    @staticmethod
    def prepare():
        """Nothing to load: NumPy and the exercises are loaded with the grader."""

    def exam(self, exercise):
        return Exam(self.name, exercise.probes, maker, True, functools.partial(Mutants.of, exercise))

    def probes(self, exercise):
        return self.exam(exercise).probes

    def mutants(self, exercise):
        return self.exam(exercise).mutants()


NUMPY = NumpyTrack()
TRACKS = {track.name: track for track in (NUMPY, TORCH)}


def track_for(cls):
    """The track a class is graded on: the PyTorch track for a torch.nn.Module, NumPy's for a
    layer written to the practice contract. A function answer (fold_batchnorm) is on the
    PyTorch track when its file imports torch (``import torch``, ``import torch.nn.functional
    as F``): it is called with tensors."""
    if isinstance(cls, type):
        return TORCH if is_torch_module(cls) else NUMPY
    imported = getattr(cls, "__globals__", {}).values()
    uses_torch = any(isinstance(v, types.ModuleType) and v.__name__.partition(".")[0] == "torch"
                     for v in imported)
    return TORCH if uses_torch else NUMPY


def exam(answer, exercise):
    """The ``runs.Exam`` of ``exercise`` on the answer's track: ``answer`` is the answer's
    class (or function), whose track ``track_for`` chooses, a track's name (``Exam.track``,
    as the process that ran the answer gives it) or a track."""
    if isinstance(answer, str):
        return TRACKS[answer].exam(exercise)
    if answer in TRACKS.values():
        return answer.exam(exercise)
    return track_for(answer).exam(exercise)


_PREPARED = set()  # the tracks prepared in this process


def preload(path):
    """Prepare, once per process, every track whose package the file at ``path`` imports
    (torch): each process forked afterwards to run an answer finds it loaded and warm (the
    import of torch and its first backward take seconds, which the answer's process would
    spend within its time limit). A track that cannot be prepared (no torch here) is left for
    the answer's process to report."""
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return
    for track in TRACKS.values():
        if (track.imports and track.name not in _PREPARED
                and re.search(rf"^\s*(import|from)\s+{track.imports}\b", text, re.MULTILINE)):
            _PREPARED.add(track.name)
            try:
                track.prepare()
            except Exception:  # noqa: BLE001, S110 - no torch here: the answer's process says so
                pass
