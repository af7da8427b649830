"""The PyTorch track of interview practice: the answer is a torch.nn.Module with a forward only.

In an interview "hand-write LayerNorm" is usually answered in PyTorch: an nn.Module whose
parameters are nn.Parameter (``weight``, ``bias``), whose running statistics are buffers, and
whose backward autograd writes. ``normcore practice new layernorm --torch`` writes such a
skeleton (``skeletons/torch/``), ``practice solution layernorm --torch`` prints a reference
answer (``solutions/torch/``), and ``practice check`` grades a file that subclasses
torch.nn.Module on the exercise's own probes, through ``adapter.TorchDriver`` (NumPy in, NumPy
out, gradients from autograd), plus the probes of ``probes.py`` (the module's parameters,
buffers and state_dict against torch's own layer, the input left unchanged, float16). A
failure is named from ``mistakes.py``: the NumPy catalog's forward mistakes written in torch,
and the mistakes only a torch module can make.

Every exercise has its torch version. fold_batchnorm is a function: a file whose function
imports torch is graded on tensors (``tracks.track_for``). SyncBatchNorm's workers reach their
group through ``group.AutogradGroup``, whose all_reduce autograd differentiates.

Only ``adapter`` (and ``group``, which it uses) imports torch; without torch a torch file is
reported as needing it.
"""

import numpy as np

from ...i18n import N_, translator
from ..loading import CannotGrade, user_frame
from ..mutants import Mutants, solution_source
from ..probes import run_probe
from . import mistakes
from .probes import build, numpy_probes, torch_probes

_ = translator("practice")
# also what normcore practice new|solution NAME --torch says: _(NO_SUCH_EXERCISE)
NO_SUCH_EXERCISE = N_("the PyTorch track has no {name} exercise yet; it has {names}")

EXERCISES = ("batchnorm", "layernorm", "rmsnorm", "groupnorm", "dropout", "softmax", "log_softmax",
             "cross_entropy", "dyt", "attention", "qk_norm", "transformer_block",
             "mlp_with_batchnorm", "fold_batchnorm", "fold_norm_affine", "sync_batchnorm")
TORCH_NN = {"batchnorm": "BatchNorm1d", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm",
            "groupnorm": "GroupNorm", "dropout": "Dropout", "softmax": "Softmax",
            "log_softmax": "LogSoftmax", "cross_entropy": "CrossEntropyLoss"}  # torch's own layers


def key(exercise):
    """The torch track's key of an exercise: its answer solutions/torch/NAME.py, its variants."""
    if exercise.name not in EXERCISES:
        raise CannotGrade(_(NO_SUCH_EXERCISE).format(name=exercise.name,
                                                     names=", ".join(EXERCISES)))
    return mistakes.TRACK + exercise.name


class TorchMutants(Mutants):
    """The torch mutants of an exercise; the torch-only probes' reference is torch's own layer."""

    def reference(self, probe):
        from . import adapter  # torch
        if probe.label not in torch_probes(self.exercise):
            return super().reference(probe)
        if probe.label not in self._reference:
            self._reference[probe.label] = run_probe(probe, adapter.maker(torch_reference(self.exercise)))
        return self._reference[probe.label]


def torch_reference(exercise):
    """torch's own layer for the exercise, or the track's reference answer where torch has none
    (DyT; attention, whose torch layer keeps its weights otherwise; SyncBatchNorm, whose torch
    layer needs torch.distributed)."""
    import torch
    if exercise.name in TORCH_NN and hasattr(torch.nn, TORCH_NN[exercise.name]):
        return getattr(torch.nn, TORCH_NN[exercise.name])
    namespace = {}
    exec(compile(solution_source(key(exercise)), f"<torch answer {exercise.name}>", "exec"), namespace)
    return namespace[exercise.class_name]


class TorchTrack:
    """How the grader drives a torch.nn.Module: its maker, mutants, probes and TODOs (the
    interface every track has: ``tracks.py``). Its backward is autograd's, never the answer's
    own: ``forward_only`` leaves the backward's observations out of the grade, not out of the
    run."""

    name = "torch"
    backward_by_hand = False

    @staticmethod
    def prepare():
        """Import torch and run one backward, here, once: what torch loads lazily (seconds of
        imports on the first backward given a gradient) is then loaded in every process
        forked from this one to run an answer, and not within its time limit."""
        from . import adapter
        x = adapter.torch.ones(2, 3, dtype=adapter.torch.float64, requires_grad=True)
        y = adapter.torch.nn.functional.layer_norm(x, (3,))
        y.backward(adapter.torch.ones_like(y))

    @staticmethod
    def maker(cls, forward_only=False):
        from . import adapter
        return adapter.maker(cls)

    @staticmethod
    def mutants(exercise):
        from . import adapter
        name = key(exercise)
        return TorchMutants.of(exercise, name, mistakes.mistakes_for(name), adapter.maker)

    @staticmethod
    def probes(exercise):
        return exercise.probes + numpy_probes(exercise) + tuple(torch_probes(exercise).values())

    @staticmethod
    def not_implemented(cls, exercise, path, forward_only=False):
        """['forward'] while the skeleton's forward still raises NotImplementedError (for a
        function, [its name] while it does)."""
        from . import adapter
        x = np.random.default_rng(0).standard_normal(exercise.example_shape)
        method = exercise.class_name if exercise.function else "forward"
        try:
            if exercise.function:
                adapter.maker(cls)(*exercise.example_args)
            else:
                build(exercise, adapter.maker(cls)).forward(x, *exercise.example_extra)
        except NotImplementedError as e:
            frame = user_frame(e, path)
            return [method] if frame is not None and frame.name == method else []
        except Exception:  # noqa: BLE001 - other problems are reported by the checks
            pass
        return []


TRACK = TorchTrack()  # the track of every torch answer (tracks.track_for chooses it)
