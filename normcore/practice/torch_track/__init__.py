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

Every exercise has its torch version but those of ``NUMPY_ONLY``. fold_batchnorm is a function: a file whose function
imports torch is graded on tensors (``tracks.track_for``). SyncBatchNorm's workers reach their
group through ``group.AutogradGroup``, whose all_reduce autograd differentiates.

Only ``adapter`` (and ``group``, which it uses) imports torch; without torch a torch file is
reported as needing it.
"""

import functools

from ...i18n import N_, translator
from .. import answers
from ..loading import CannotGrade
from ..mutants import Mutants
from ..runs import Exam
from . import mistakes
from .probes import numpy_probes, torch_probes

_ = translator("practice")
# also what normcore practice new|solution NAME --torch says: _(NO_SUCH_EXERCISE)
NO_SUCH_EXERCISE = N_("the PyTorch track has no {name} exercise yet; it has {names}")

EXERCISES = ("batchnorm", "layernorm", "rmsnorm", "groupnorm", "dropout", "softmax", "log_softmax",
             "cross_entropy", "dyt", "attention", "qk_norm", "transformer_block",
             "mlp_with_batchnorm", "fold_batchnorm", "fold_norm_affine", "sync_batchnorm", "weight_norm",
             "soft_cap", "z_loss")
# the exercises the track does not have, and why (what ``normcore practice list`` says of them)
NUMPY_ONLY = {
    "batch_renorm": N_("NumPy only: torch has no Batch Renormalization layer"),
}
TORCH_NN = {"batchnorm": "BatchNorm1d", "layernorm": "LayerNorm", "rmsnorm": "RMSNorm",
            "groupnorm": "GroupNorm", "dropout": "Dropout", "softmax": "Softmax",
            "log_softmax": "LogSoftmax", "cross_entropy": "CrossEntropyLoss"}  # torch's own layers


def key(exercise):
    """The torch track's key of an exercise: its answer solutions/torch/NAME.py, its variants."""
    if exercise.name not in EXERCISES:
        raise CannotGrade(_(NO_SUCH_EXERCISE).format(name=exercise.name,
                                                     names=", ".join(EXERCISES)))
    return mistakes.TRACK + exercise.name


def torch_reference(exercise):
    """torch's own layer for the exercise, or the track's reference answer where torch has none
    (DyT; attention, whose torch layer keeps its weights otherwise; SyncBatchNorm, whose torch
    layer needs torch.distributed; weight_norm, which torch has as a function of a Linear, whose
    equality with the answer tests/test_practice_torch.py checks)."""
    import torch
    if exercise.name in TORCH_NN and hasattr(torch.nn, TORCH_NN[exercise.name]):
        return getattr(torch.nn, TORCH_NN[exercise.name])
    namespace = {}
    exec(compile(answers.source(key(exercise)), f"<torch answer {exercise.name}>", "exec"), namespace)
    return namespace[exercise.class_name]


class TorchTrack:
    """How the grader drives a torch.nn.Module: its ``exam`` of each exercise (the interface
    every track has: ``tracks.py``). Its backward is autograd's, never the answer's own:
    ``forward_only`` leaves the backward's observations out of the grade, not out of the
    run."""

    name = "torch"
    imports = "torch"

    @staticmethod
    def prepare():
        """Import torch and run one backward, here, once: what torch loads lazily (seconds of
        imports on the first backward given a gradient) is then loaded in every process
        forked from this one to run an answer, and not within its time limit."""
        from . import adapter
        x = adapter.torch.ones(2, 3, dtype=adapter.torch.float64, requires_grad=True)
        y = adapter.torch.nn.functional.layer_norm(x, (3,))
        y.backward(adapter.torch.ones_like(y))

    def exam(self, exercise):
        """The exercise's probes and the track's own (``probes.py``); the answer driven by
        ``adapter.maker``; the mutants of ``mistakes.py``, and torch's own layer as the
        reference of the probes of what only a torch module has."""
        from . import adapter  # torch
        name = key(exercise)
        own = torch_probes(exercise)
        reference = adapter.maker(torch_reference(exercise))
        mutants = functools.partial(Mutants.of, exercise, name, mistakes.mistakes_for(name),
                                    adapter.maker, dict.fromkeys(own, reference))
        return Exam(self.name, self.probes(exercise), adapter.maker, False, mutants)

    @staticmethod
    def probes(exercise):
        return exercise.probes + numpy_probes(exercise) + tuple(torch_probes(exercise).values())

    def mutants(self, exercise):
        return self.exam(exercise).mutants()


TRACK = TorchTrack()  # the track of every torch answer (tracks.track_for chooses it)
