"""The tracks of interview practice: how the grader drives an answer, whatever it is written in.

A NumPy answer (``NUMPY``) writes its forward and its backward by hand and is driven through
the practice contract (``driver.Driver``); a torch.nn.Module (``torch_track.TRACK``) writes a
forward only, and its gradients come from autograd. ``track_for`` chooses an answer's track
once; from then on every track answers the same questions, so that the grader, the diagnosis
and the report never ask which track an answer is on:

- ``maker(cls, forward_only=False)``: make(*args, **kwargs) -> a driver around a fresh
  instance of the answer (with ``forward_only``, one whose backward is never called);
- ``mutants(exercise)``: the reference and the catalogued mutants (``mutants.Mutants``);
- ``probes(exercise)``: the probes every answer on the track runs;
- ``not_implemented(cls, exercise, path, forward_only=False)``: the methods of the skeleton
  still raising NotImplementedError (its TODOs);
- ``prepare()``: load, in the grader, what the track's answers need, before a process to
  run one is forked from it (``sandbox``);
- ``name``: how the process that ran an answer names its track to the grader (``TRACKS``);
- ``backward_by_hand``: whether the answer writes its own backward (a class without one is
  then graded on its forward alone).
"""

import types
import warnings

import numpy as np

from .loading import is_torch_module, user_frame
from .mutants import Mutants
from .probes import maker
from .torch_track import TRACK as TORCH


class NumpyTrack:
    """A layer written to the practice contract in NumPy: forward and backward by hand."""

    name = "numpy"
    backward_by_hand = True

    @staticmethod
    def prepare():
        """Nothing to load: NumPy and the exercises are loaded with the grader."""

    @staticmethod
    def maker(cls, forward_only=False):
        return maker(cls, forward_only)

    @staticmethod
    def mutants(exercise):
        return Mutants.of(exercise)

    @staticmethod
    def probes(exercise):
        return exercise.probes

    @staticmethod
    def not_implemented(cls, exercise, path, forward_only=False):
        """The methods of the class (forward, backward; a function's name) that still raise
        NotImplementedError from the file itself, run once on the exercise's example input."""
        if exercise.function:  # a function: called once on the example arguments
            return [exercise.class_name] if _raises_todo(
                lambda: cls(*exercise.example_args), path, exercise.class_name) else []
        x = np.random.default_rng(0).standard_normal(exercise.example_shape)

        def forward():
            cls(*exercise.example_args).forward(x, *exercise.example_extra)

        def backward():
            layer = cls(*exercise.example_args)
            try:
                layer.forward(x, *exercise.example_extra)
            except Exception:  # noqa: BLE001 - only backward's own TODO matters here
                pass
            layer.backward(x)
        methods = {"forward": forward} if forward_only else {"forward": forward, "backward": backward}
        return [name for name, call in methods.items() if _raises_todo(call, path, name)]


def _raises_todo(call, path, method):
    """Whether ``call()`` raises NotImplementedError from ``method`` in file ``path``; any
    other problem is the checks' to report."""
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call()
    except NotImplementedError as e:
        frame = user_frame(e, path)
        return frame is not None and frame.name == method
    except Exception:  # noqa: BLE001 - other problems are reported by the checks
        pass
    return False


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
