"""The exercises of interview practice, one module per family, and the registry of them all.

Each exercise is an ``Exercise`` (``base.py``): the class (or function) the candidate writes,
normcore's layer that grades it, and the probes: seeded runs whose observations are compared
one to one with the reference's (see ``base.py``). The families:

- ``norms``: BatchNorm1d (and its running statistics), LayerNorm, RMSNorm, DyT, GroupNorm;
- ``batchnorm``: BatchNorm in practice: fold_batchnorm, fold_norm_affine, an MLP with BatchNorm;
- ``distributed``: SyncBatchNorm over an in-process group;
- ``dropout``: Dropout;
- ``attention``: Softmax, LogSoftmax, CrossEntropyLoss, self-attention, QK-norm;
- ``blocks``: a Transformer block's feed-forward half, Pre-Norm, Post-Norm and the reordered norm;
- ``weight_norm``: WeightNorm of a Linear (w = g * v / ||v||);
- ``batch_renorm``: Batch Renormalization (BatchNorm corrected by r and d);
- ``logits``: SoftCap and cross-entropy with the z-loss.

How to add an exercise (a SoftCap, a z-loss, a WeightNorm, a BatchRenorm):
1. write its ``Exercise`` in the family it belongs to (a new family: a new module here), with
   probes built from ``base.py``'s builders where they fit (``norm_probe``,
   ``accumulation_probe``) and a seeded ``run(rec, make, rng)`` of its own where not;
2. add it to ``EXERCISES`` below (the order of ``path()`` comes from its difficulty and time box);
3. give it a skeleton and a reference answer (``skeletons/NAME.py``, ``solutions/NAME.py``;
   under ``torch/`` for the PyTorch track, named in ``torch_track.EXERCISES``) and its
   catalogued mistakes (``catalog/``); the practice tests then grade the answer and every
   mistake's mutant on the probes.
"""

from ..probes import F32, F64  # noqa: F401 - importable from here, as before
from .attention import ATTENTION, CROSS_ENTROPY, LOG_SOFTMAX, QK_NORM, SOFTMAX
from .base import DIFFICULTY, Exercise, Probe, accumulation_probe, norm_probe
from .batch_renorm import BATCH_RENORM
from .batchnorm import FOLD_BATCHNORM, FOLD_NORM_AFFINE, MLP_WITH_BATCHNORM
from .blocks import TRANSFORMER_BLOCK
from .distributed import SYNC_BATCHNORM
from .dropout import DROPOUT
from .logits import SOFT_CAP, Z_LOSS
from .norms import (BATCHNORM, BN, DYT_EXERCISE, GROUPNORM, LAYERNORM, RMSNORM, RUNNING_PROBE,
                    RUNNING_ROWS, RUNNING_STATISTICS, is_running_statistics)
from .weight_norm import WEIGHT_NORM

__all__ = ["DIFFICULTY", "EXERCISES", "Exercise", "Probe", "accumulation_probe", "norm_probe",
           "BN", "F32", "F64", "RUNNING_PROBE", "RUNNING_ROWS", "RUNNING_STATISTICS",
           "is_running_statistics", "path"]

EXERCISES = {e.name: e for e in (BATCHNORM, LAYERNORM, RMSNORM, GROUPNORM, DROPOUT, SOFTMAX,
                                 LOG_SOFTMAX, DYT_EXERCISE, FOLD_BATCHNORM, FOLD_NORM_AFFINE,
                                 CROSS_ENTROPY, ATTENTION, QK_NORM, TRANSFORMER_BLOCK,
                                 MLP_WITH_BATCHNORM, SYNC_BATCHNORM, WEIGHT_NORM, BATCH_RENORM, SOFT_CAP,
                                 Z_LOSS)}


def path():
    """The exercises from easy to hard (then by time box): the order to practise them in."""
    return sorted(EXERCISES.values(), key=lambda e: (e.difficulty, e.minutes))
