"""Weight normalization of a Linear: w = g * v / ||v||, one length g per output row."""

import numpy as np

from .. import references
from ...i18n import N_
from .base import Exercise, Probe, _tol, _two_backward_calls

WN = ("weight_g", "weight_v", "bias")


def _wn_layer(make, rng, n_in, n_out, row_lengths=None):
    """WeightNormLinear(n_in, n_out) with random g (out, 1), v (out, in) and bias; the rows of v
    scaled to ``row_lengths`` times their length when given."""
    layer = make(n_in, n_out)
    v = rng.standard_normal((n_out, n_in))
    if row_lengths is not None:
        v = v * np.asarray(row_lengths, dtype=float)[:, None]
    layer.set_param("weight_g", rng.standard_normal((n_out, 1)))
    layer.set_param("weight_v", v)
    layer.set_param("bias", rng.standard_normal(n_out))
    return layer


def wn_probe(label, n_in, n_out, xshape, dtype=np.float64, row_lengths=None):
    """A forward and backward of WeightNormLinear(n_in, n_out) on a random input (*, n_in): y,
    dx, dweight_g, dweight_v and dbias, the upstream gradient (*, n_out) random. A float32
    input meets float32 parameters (``Driver.to_dtype``)."""
    def run(rec, make, rng):
        layer = _wn_layer(make, rng, n_in, n_out, row_lengths)
        x = rng.standard_normal(xshape).astype(dtype)
        layer.to_dtype(WN, x.dtype)
        y = layer.forward(x)
        rec("forward", y, _tol(x))
        if x.dtype != np.float64:
            rec("output dtype", str(np.asarray(y).dtype), 0, "equal")
        dy = rng.standard_normal(xshape[:-1] + (n_out,)).astype(dtype)
        layer.zero_grad(WN)
        rec("dx", layer.backward(dy), _tol(x))
        for name in WN:
            rec("d" + name, layer.grad(name), _tol(x))
    return Probe(label, run)


def wn_accumulation(rec, make, rng):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    _two_backward_calls(rec, _wn_layer(make, rng, 5, 3), rng, (4, 5), WN, yshape=(4, 3))


WEIGHT_NORM = Exercise(
    "weight_norm", "WeightNormLinear", references.WeightNormLinear,
    N_("WeightNormLinear(in_features, out_features): a Linear whose weight is w = g * v / ||v||, "
       "one g per output row (weight_g (out, 1), weight_v (out, in), bias)"),
    (
        wn_probe("(4, 5) -> 3", 5, 3, (4, 5)),
        wn_probe("(2, 3, 5) -> 4, rank 3", 5, 4, (2, 3, 5)),
        wn_probe("(4, 5) -> 3 float32", 5, 3, (4, 5), dtype=np.float32),
        # rows of lengths 0.01, 1 and 100: a norm taken over the wrong axis mixes them
        wn_probe("rows of v far apart in length (4, 3) -> 3", 3, 3, (4, 3),
                 row_lengths=(0.01, 1.0, 100.0)),
        wn_probe("one output (3, 6) -> 1", 6, 1, (3, 6)),
        wn_probe("one sample (1, 5) -> 3", 5, 3, (1, 5)),
        Probe("gradients accumulate (4, 5)", wn_accumulation),
    ),
    (3, 2), (4, 3), difficulty=2, minutes=25,
)
