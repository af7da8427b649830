"""Logit control: soft-capping (y = c * tanh(x / c)) and cross-entropy with the z-loss."""

import numpy as np

from .. import references
from ... import nn
from ...i18n import N_
from .attention import ce_probe
from .base import Exercise, norm_probe


# --- SoftCap ----------------------------------------------------------------------------------
def cap_probe(label, cap, xshape, scale, dtype=np.float64, shift=0.0):
    """A forward and backward of SoftCap(cap) on x drawn with standard deviation ``scale``: a
    cap other than 1 tells 1 - (y / c)**2 from 1 - y**2, and x of the cap's size or larger puts
    tanh where its slope is far from 1."""
    return norm_probe(f"{label}, c = {cap:g}", (cap,), None, xshape, (), dtype=dtype, scale=scale,
                      shift=shift)


SOFT_CAP = Exercise(
    "soft_cap", "SoftCap", nn.SoftCap,
    N_("SoftCap(cap): y = cap * tanh(x / cap), any shape, forward and backward; no parameters"),
    (
        cap_probe("(4, 6)", 2.0, (4, 6), 3.0),
        cap_probe("rank 3 (2, 3, 4)", 0.5, (2, 3, 4), 1.0),
        cap_probe("(4, 6) float32", 5.0, (4, 6), 8.0, dtype=np.float32),
        cap_probe("tanh saturated (3, 5)", 3.0, (3, 5), 20.0),
        cap_probe("tanh nearly linear (3, 5)", 30.0, (3, 5), 1.0),
        cap_probe("logits around 100 (3, 5)", 30.0, (3, 5), 30.0, shift=100.0),
    ),
    (2.0,), (4, 6), difficulty=1, minutes=15,
)


# --- cross-entropy with the z-loss -----------------------------------------------------------
Z_LOSS = Exercise(
    "z_loss", "ZLossCrossEntropy", references.ZLossCrossEntropy,
    N_("ZLossCrossEntropy(z_loss): cross-entropy plus z_loss * mean(logsumexp(logits)**2); "
       "logits (N, C), integer targets (N,); backward(dloss) -> dlogits"),
    (
        ce_probe("(8, 5), z = 0.01", 8, 5, shift=2.0, kwargs={"z_loss": 0.01}),
        ce_probe("one sample (1, 3), z = 0.1", 1, 3, shift=-1.0, kwargs={"z_loss": 0.1}),
        ce_probe("(16, 10), z = 1e-4", 16, 10, scale=3.0, shift=5.0, kwargs={"z_loss": 1e-4}),
        ce_probe("(8, 5) float32, z = 0.1", 8, 5, dtype=np.float32, shift=3.0,
                 kwargs={"z_loss": 0.1}),
        ce_probe("logits around 1000 (6, 4), z = 1e-4", 6, 4, scale=3.0, shift=1000.0,
                 kwargs={"z_loss": 1e-4}),
        ce_probe("confident and wrong (6, 4), z = 0.01", 6, 4, wrong_by=800.0,
                 kwargs={"z_loss": 0.01}),
    ),
    (0.01,), (4, 3), difficulty=2, minutes=25, example_extra=(np.array([0, 2, 1, 0]),),
)
