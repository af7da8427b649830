"""Blocks: a residual feed-forward block with its norm before the branch (Pre-Norm), after the
residual sum (Post-Norm) or on the branch's output (the reordered norm, OLMo 2's)."""

import numpy as np

from .. import references
from ...i18n import N_
from .base import Exercise, Probe, _constant, _step, _two_backward_calls, refusable


# --- TransformerBlock (a residual feed-forward block, Pre-Norm, Post-Norm or reordered) --------
BLOCK = ("gamma", "beta", "w1", "b1", "w2", "b2")
POSITION_NAMES = {"pre": "Pre-Norm", "post": "Post-Norm", "reordered": "reordered norm"}
# a position an answer may refuse (published blocks offer Pre-Norm and Post-Norm alone): its
# probes are then not written ("n/a"), neither passed nor failed (``base.refusable``)
OPTIONAL_POSITIONS = ("reordered",)


def _block_shapes(c, d_ff):
    return {"gamma": (c,), "beta": (c,), "w1": (c, d_ff), "b1": (d_ff,), "w2": (d_ff, c), "b2": (c,)}


def _block(make, rng, position, c, d_ff):
    layer = make(c, d_ff, position=position)
    for name, shape in _block_shapes(c, d_ff).items():
        layer.set_param(name, rng.standard_normal(shape))
    return layer


def _position_probe(label, position, run):
    """The probe ``run`` of one position, labelled with its name; refusable where the position
    is optional."""
    if position in OPTIONAL_POSITIONS:
        run = refusable(("position", position), run)
    return Probe(f"{POSITION_NAMES[position]} {label}", run)


def block_probe(label, position, xshape, d_ff=6, dtype=np.float64, edit=None):
    """A forward and a backward of TransformerBlock(C, d_ff, position), every parameter random."""
    def run(rec, make, rng):
        layer = _block(make, rng, position, xshape[-1], d_ff)
        x = rng.standard_normal(xshape)
        if edit is not None:
            edit(x)
        _step(rec, layer, x.astype(dtype), rng, BLOCK)
    return _position_probe(label, position, run)


def block_accumulation_probe(position, xshape, d_ff=6):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    def run(rec, make, rng):
        layer = _block(make, rng, position, xshape[-1], d_ff)
        _two_backward_calls(rec, layer, rng, xshape, BLOCK)
    return _position_probe(f"gradients accumulate {xshape}", position, run)


TRANSFORMER_BLOCK = Exercise(
    "transformer_block", "TransformerBlock", references.FeedForwardBlock,
    N_("TransformerBlock(d_model, d_ff, position): x + F(LN(x)), LN(x + F(x)) or x + LN(F(x)), "
       "F a ReLU feed-forward; the three positions graded"),
    tuple(probe for position in ("pre", "post", "reordered") for probe in (
        block_probe("(2, 3, 4), d_ff 6", position, (2, 3, 4)),
        block_probe("rank 2 (5, 4), d_ff 3", position, (5, 4), d_ff=3),
        block_probe("(2, 3, 4) float32", position, (2, 3, 4), dtype=np.float32),
        block_probe("constant row (2, 3, 4)", position, (2, 3, 4), edit=_constant((0, 1))),
        block_accumulation_probe(position, (2, 3, 4)),
    )),
    (4, 6), (2, 3, 4), difficulty=3, minutes=40,
)

