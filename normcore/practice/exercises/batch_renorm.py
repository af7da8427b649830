"""Batch Renormalization: BatchNorm whose batch statistics are corrected by r and d."""

import numpy as np

from ... import norms
from ...i18n import N_
from ..probes import F32, F64
from .base import Exercise, Probe, _step, _two_backward_calls

BR = ("gamma", "beta")
# per channel: r and d inside their bounds, r above r_max = 3, d beyond d_max = 5, r below
# 1 / r_max, d below -d_max (running statistics at their start, mean 0 and variance 1)
SCALES = np.array([0.5, 2.0, 6.0, 1.0, 0.1])
SHIFTS = np.array([0.3, -1.0, 2.0, 8.0, -7.0])


def _batch(rng, shape, scales=SCALES, shifts=SHIFTS):
    """A random input (N, C, ...) whose channels have the given standard deviations and means."""
    view = (1, -1) + (1,) * (len(shape) - 2)
    return rng.standard_normal(shape) * scales.reshape(view) + shifts.reshape(view)


def _br_layer(make, rng, C, kwargs):
    layer = make(C, **kwargs)
    for name in BR:
        layer.set_param(name, rng.standard_normal(C))
    return layer


def br_probe(label, shape, steps=0, dtype=np.float64, kwargs=None, evaluation=False):
    """``steps`` training forwards (the running statistics move towards the batches), then one
    forward and backward in training (or in evaluation) on a batch whose channels put r and d
    inside and beyond their bounds; the running statistics after it."""
    def run(rec, make, rng):
        layer = _br_layer(make, rng, shape[1], kwargs or {})
        for _ in range(steps):
            layer.forward(_batch(rng, shape))
        if evaluation:
            layer.eval()
        _step(rec, layer, _batch(rng, shape).astype(dtype), rng, BR)
        tol = F64 if dtype == np.float64 else F32  # a float32 batch's statistics are float32's
        rec("running_mean", layer.running("mean"), tol)
        rec("running_var", layer.running("var"), tol)
    return Probe(label, run)


def br_accumulation(rec, make, rng):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    _two_backward_calls(rec, _br_layer(make, rng, 5, {}), rng, (8, 5), BR, draw=_batch)


BATCH_RENORM = Exercise(
    "batch_renorm", "BatchRenorm1d", norms.BatchRenorm1d,
    N_("BatchRenorm1d(num_features, r_max, d_max, eps, momentum): BatchNorm whose batch "
       "statistics are corrected by r and d, clipped and held constant in the backward; input "
       "(N, C) or (N, C, L); running statistics"),
    (
        br_probe("train (8, 5)", (8, 5)),
        br_probe("train after 3 steps (8, 5)", (8, 5), steps=3),
        br_probe("after 2 steps (4, 5, 3), rank 3", (4, 5, 3), steps=2),
        br_probe("float32 (8, 5)", (8, 5), dtype=np.float32),
        br_probe("r_max=1.5, d_max=0.5 (8, 5)", (8, 5), kwargs={"r_max": 1.5, "d_max": 0.5}),
        # 0.3, not 0.5: the momentum flipped (0.7 weighting the new batch) must show
        br_probe("momentum=0.3, after 2 steps (6, 5)", (6, 5), steps=2, kwargs={"momentum": 0.3}),
        br_probe("momentum=None, after 2 steps (6, 5)", (6, 5), steps=2, kwargs={"momentum": None}),
        br_probe("eval after 3 steps (8, 5)", (8, 5), steps=3, evaluation=True),
        Probe("gradients accumulate (8, 5)", br_accumulation),
    ),
    (4,), (5, 4), difficulty=3, minutes=35,
)
