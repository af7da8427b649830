"""The catalog of mistakes people make when they hand-write a norm layer, DyT, Dropout,
softmax, log-softmax, cross-entropy, attention (with or without QK-norm), a residual block
with its norm, a small MLP with BatchNorm, the fold of a BatchNorm into a Linear, the fold of
a norm's affine into the next Linear, SyncBatchNorm across workers, WeightNorm of a Linear,
Batch Renormalization, a soft-cap, or the z-loss.

Each ``Mistake`` has an id, a title, the symptom it produces, a hint toward the fix (not the
code) and where normcore teaches the right way (``taught_in``: a notebook section, a reference
answer's derivation or ``normcore explain``). Its *signature* is a mutant: the reference
answer in ``solutions/`` with exactly that mistake, made by replacing a piece of one or two
lines of the answer's source (``variants``; a mistake may be written in more than one way).
Each piece is an ``Anchor``: its text and the tag of its line, the ``[name]`` at the end of
that line in the answer. The grader runs every mutant on the same checks as the user's layer
and names the mistake whose numbers the user's numbers match. It never reads the user's
source, so the same mistake written in another style (a staged backward, loops) gets the same
name; where styles give different numbers (BatchNorm's staged backward in evaluation), the
mistake has one variant per style.

One file per family of exercises holds its anchors and its mistakes (a mistake that several
families make lives with its main family): ``norms`` (BatchNorm, LayerNorm, RMSNorm,
GroupNorm), ``dropout``, ``softmax`` (with log-softmax and cross-entropy), ``attention`` (with
QK-norm), ``blocks`` (the residual block, the MLP with BatchNorm), ``dyt``,
``fold_batchnorm``, ``fold_norm_affine``, ``sync_batchnorm``, ``weight_norm``, ``batch_renorm``
and ``logits`` (soft-cap and z-loss); ``base`` defines ``Anchor`` and ``Mistake``.
"""

from . import (attention, blocks, dropout, dyt, fold_batchnorm, fold_norm_affine, logits, norms, softmax,
               sync_batchnorm)
from . import batch_renorm, weight_norm
from .base import Anchor, Mistake

CATALOG = [mistake for family in (norms, dropout, softmax, attention, blocks, dyt, fold_batchnorm,
                                  fold_norm_affine, sync_batchnorm, weight_norm, batch_renorm, logits)
           for mistake in family.MISTAKES]

BY_ID = {m.id: m for m in CATALOG}


def mistakes_for(exercise):
    """The catalogued mistakes that apply to an exercise, in catalog order."""
    return [m for m in CATALOG if exercise in m.variants]


__all__ = ["Anchor", "Mistake", "CATALOG", "BY_ID", "mistakes_for"]
