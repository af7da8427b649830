"""Dropout: the fraction dropped, the scale kept, evaluation, float32, p = 0 and 1, a seed."""

import numpy as np

from ... import nn
from ...i18n import N_
from ..probes import F32, F64
from .base import Exercise, Probe

FRACTION = 0.03  # absolute tolerance of a fraction measured on 20 000 Bernoulli draws (about 6 sigma)


# --- Dropout ----------------------------------------------------------------------------------
P = 0.3  # not 0.5, so that p and 1 - p can be told apart
SHAPE = (200, 100)


def _factor(out, inp):
    """The median of out / inp over the nonzero outputs (nan when every output is zero)."""
    out, inp = np.asarray(out, dtype=np.float64), np.asarray(inp, dtype=np.float64)
    kept = out != 0
    return float(np.median(out[kept] / inp[kept])) if kept.any() else float("nan")


def dropout_train(rec, make, rng):
    layer = make(P, rng=0)
    x = rng.standard_normal(SHAPE)
    y = np.asarray(layer.forward(x))
    dropped = y == 0
    rec("fraction of units dropped", dropped.mean(), FRACTION, "abs")
    rec("fraction of columns dropped in every row", dropped.all(axis=0).mean(), FRACTION, "abs")
    rec("factor on the kept units", _factor(y, x), F64)
    dy = rng.standard_normal(SHAPE)
    dx = np.asarray(layer.backward(dy))
    rec("gradients masked unlike the forward (fraction)", ((dx == 0) != dropped).mean(), FRACTION, "abs")
    rec("factor on the kept gradients", _factor(dx, dy), F64)


def dropout_eval(after_training=False):
    """Evaluation: the output is the input and dx is dy. ``after_training``: a training forward
    first, whose mask the evaluation's backward must not reuse."""
    def run(rec, make, rng):
        layer = make(P, rng=0)
        if after_training:
            layer.forward(rng.standard_normal(SHAPE))
        layer.eval()
        x = rng.standard_normal(SHAPE)
        y = np.asarray(layer.forward(x))
        rec("fraction of units dropped", (y == 0).mean(), FRACTION, "abs")
        rec("output / input", _factor(y, x), F64)
        dy = rng.standard_normal(SHAPE)
        rec("dx / dy", _factor(layer.backward(dy), dy), F64)
    return Probe(f"eval p={P} {SHAPE}" + (", after a training forward" if after_training else ""), run)


def dropout_float32(rec, make, rng):
    x = rng.standard_normal(SHAPE).astype(np.float32)
    y = make(P, rng=0).forward(x)
    rec("output dtype", str(np.asarray(y).dtype), 0, "equal")
    rec("factor on the kept units", _factor(y, x), F32)


def dropout_extreme(p):
    def run(rec, make, rng):
        layer = make(p, rng=0)
        x = rng.standard_normal((4, 5))
        rec("forward", layer.forward(x), F64)
        rec("dx", layer.backward(rng.standard_normal((4, 5))), F64)
    return Probe(f"p={p:g} (4, 5)", run)


def dropout_seeded(rec, make, rng):
    x = rng.standard_normal((20, 10))
    y1, y2 = (np.asarray(make(P, rng=7).forward(x)) for _ in range(2))
    rec("two layers with rng=7 drop the same units", float(np.array_equal(y1 == 0, y2 == 0)), 0, "abs")


DROPOUT = Exercise(
    "dropout", "Dropout", nn.Dropout,
    N_("Dropout(p, rng): inverted dropout; the grader checks fractions, factors and masks"),
    (
        Probe(f"train p={P} {SHAPE}", dropout_train),
        dropout_eval(),
        dropout_eval(after_training=True),
        Probe(f"train float32 p={P}", dropout_float32),
        dropout_extreme(0.0),
        dropout_extreme(1.0),
        Probe("seeded rng", dropout_seeded),
    ),
    (P,), (4, 6), difficulty=1, minutes=15,
)

