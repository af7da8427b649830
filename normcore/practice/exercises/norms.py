"""The norms: BatchNorm1d (with its running statistics), LayerNorm, RMSNorm, DyT, GroupNorm."""

import numpy as np

from ... import norms
from ...i18n import N_
from ..probes import F64
from .base import Exercise, Probe, _constant, _randomize, _step, _two_backward_calls, accumulation_probe, norm_probe


# --- BatchNorm1d ------------------------------------------------------------------------------
BN = ("gamma", "beta")
CHANNEL_MEANS = np.array([1.0, -2.0, 3.0])


def bn_running_probe(label, xshape, steps, kwargs=None, then_eval=False):
    """Several training steps on batches with per-channel means 1, -2, 3 and std 2: the running
    statistics after the first and the last step; then (optionally) evaluation and train() again."""
    def run(rec, make, rng):
        layer = make(3, **(kwargs or {}))
        _randomize(layer, rng, (3,), BN)
        loc = CHANNEL_MEANS.reshape((1, 3) + (1,) * (len(xshape) - 2))
        for step in range(1, steps + 1):
            layer.forward(rng.standard_normal(xshape) * 2 + loc)
            if step in (1, steps):
                rec(f"running_mean after {step} step{'s' * (step > 1)}", layer.running("mean"), F64)
                rec(f"running_var after {step} step{'s' * (step > 1)}", layer.running("var"), F64)
        if not then_eval:
            return
        x = rng.standard_normal(xshape) * 2 + loc
        layer.eval()
        _step(rec, layer, x, rng, BN, prefix="eval: ")
        rec("running_mean after the eval forward", layer.running("mean"), F64)
        rec("running_var after the eval forward", layer.running("var"), F64)
        layer.train()
        rec("train() again: forward", layer.forward(x), F64)
    return Probe(label, run)


BATCHNORM = Exercise(
    "batchnorm", "BatchNorm1d", norms.BatchNorm1d,
    N_("BatchNorm1d(num_features, eps, momentum): input (N, C) or (N, C, L); running statistics"),
    (
        norm_probe("train (8, 4)", (4,), (4,), (8, 4), BN, scale=2.0, shift=1.0),
        norm_probe("train (4, 3, 5), rank 3", (3,), (3,), (4, 3, 5), BN, scale=2.0, shift=1.0),
        norm_probe("train (8, 4) float32", (4,), (4,), (8, 4), BN, dtype=np.float32, scale=2.0),
        norm_probe("train batch of 2 (2, 4)", (4,), (4,), (2, 4), BN),
        norm_probe("train constant channel (6, 3)", (3,), (3,), (6, 3), BN, edit=_constant((slice(None), 1))),
        norm_probe("train small variance (8, 4)", (4,), (4,), (8, 4), BN, scale=3e-3),
        bn_running_probe("running stats (16, 3)", (16, 3), 5, then_eval=True),
        bn_running_probe("running stats (4, 3, 5)", (4, 3, 5), 3),
        bn_running_probe("running stats momentum=None", (8, 3), 3, kwargs={"momentum": None}),
        # another momentum than the default: a momentum written as a number in the code, or
        # flipped (0.7 instead of 0.3), shows here even when momentum=None is handled
        bn_running_probe("running stats momentum=0.3", (8, 3), 3, kwargs={"momentum": 0.3}),
        accumulation_probe((4,), (4,), (8, 4), BN),
    ),
    (4,), (5, 4), difficulty=3, minutes=40,
)

# A training-only BatchNorm (no running statistics, no evaluation mode: a common hand-written
# request) is graded on the rest; these observations are then "not written".
RUNNING_STATISTICS = ("batchnorm",)  # the exercises whose answer may leave them out
RUNNING_PROBE = "running stats"  # how the probes of the running statistics are labelled
RUNNING_ROWS = ("buffers", "state_dict keys", "buffers detached", "batches tracked")  # torch's


def is_running_statistics(probe, row):
    """Whether observation ``row`` of probe ``probe`` is about BatchNorm's running
    statistics or evaluation: a probe of the running statistics (its evaluation included), a
    running_mean or running_var, or the buffers that hold them (the PyTorch track)."""
    return (probe.startswith(RUNNING_PROBE) or row.startswith(("running_mean", "running_var"))
            or row in RUNNING_ROWS)


# --- LayerNorm and RMSNorm --------------------------------------------------------------------


def trailing_norm_probes(params, kwargs):
    """The probes LayerNorm and RMSNorm share: ranks 2 to 4, a multi-axis normalized_shape,
    float32, one sample, a constant row, a small-variance input, another eps, eval mode,
    accumulation."""
    return (
        norm_probe("(4, 6)", (6,), (6,), (4, 6), params, kwargs=kwargs),
        norm_probe("(2, 3, 5), rank 3", (5,), (5,), (2, 3, 5), params, kwargs=kwargs),
        norm_probe("(2, 3, 4, 5), rank 4", (5,), (5,), (2, 3, 4, 5), params, kwargs=kwargs),
        norm_probe("(2, 3, 4, 5), normalized_shape (4, 5)", ((4, 5),), (4, 5), (2, 3, 4, 5), params,
                   kwargs=kwargs),
        norm_probe("(4, 6) float32", (6,), (6,), (4, 6), params, dtype=np.float32, kwargs=kwargs),
        norm_probe("one sample (1, 6)", (6,), (6,), (1, 6), params, kwargs=kwargs),
        norm_probe("constant row (3, 6)", (6,), (6,), (3, 6), params, edit=_constant(1), kwargs=kwargs),
        norm_probe("small variance (4, 6)", (6,), (6,), (4, 6), params, scale=3e-3, shift=2e-3,
                   kwargs=kwargs),
        # another eps, comparable to the variance: the constructor's eps must be the one used
        norm_probe("eps=0.01 (4, 6)", (6,), (6,), (4, 6), params, scale=0.1, kwargs={**kwargs, "eps": 1e-2}),
        norm_probe("eval mode (4, 6)", (6,), (6,), (4, 6), params, kwargs=kwargs, evaluation=True),
        accumulation_probe((6,), (6,), (4, 6), params, kwargs=kwargs),
    )


LAYERNORM = Exercise(
    "layernorm", "LayerNorm", norms.LayerNorm,
    N_("LayerNorm(normalized_shape, eps): input (*, *normalized_shape)"),
    trailing_norm_probes(("gamma", "beta"), {"eps": 1e-5}),
    (6,), (4, 6), difficulty=2, minutes=25,
)

RMSNORM = Exercise(
    "rmsnorm", "RMSNorm", norms.RMSNorm,
    N_("RMSNorm(normalized_shape, eps=None): input (*, *normalized_shape); no beta"),
    trailing_norm_probes(("gamma",), {"eps": 1e-5}) + (
        norm_probe("default eps (4, 6)", (6,), (6,), (4, 6), ("gamma",), scale=1e-7),
        norm_probe("zero row (3, 6)", (6,), (6,), (3, 6), ("gamma",), edit=_constant(1, 0.0),
                   kwargs={"eps": 1e-5}),
    ),
    (6,), (4, 6), difficulty=1, minutes=20,
)

# --- DyT (Dynamic Tanh) ------------------------------------------------------------------------
DYT = ("alpha", "gamma", "beta")


def _dyt_layer(make, rng, normalized_shape, alpha, kwargs=None):
    """DyT(normalized_shape, alpha_init=alpha) with random gamma and beta."""
    layer = make(normalized_shape, alpha_init=alpha, **(kwargs or {}))
    _randomize(layer, rng, tuple(normalized_shape), ("gamma", "beta"))
    return layer


def dyt_probe(label, normalized_shape, xshape, alpha=(0.3, 1.5), dtype=np.float64, scale=1.0):
    """A forward and backward of DyT(normalized_shape, alpha_init=alpha) on a random input:
    alpha drawn uniformly from the range ``alpha`` (a negative range for a negative alpha),
    gamma and beta random, x standard normal times ``scale``. alpha * x decides the regime:
    |alpha * x| above about 3 saturates tanh (t = +-1, slope near 0), below 0.1 it is nearly
    linear (t = alpha * x)."""
    def run(rec, make, rng):
        layer = _dyt_layer(make, rng, normalized_shape, float(rng.uniform(*alpha)))
        x = (rng.standard_normal(xshape) * scale).astype(dtype)
        _step(rec, layer, x, rng, DYT)
    return Probe(label, run)


def dyt_assigned_alpha(rec, make, rng):
    """The default alpha_init (0.5), then alpha assigned through alpha.data as an optimizer
    would: the forward must read the Parameter, not a copy of alpha_init. One channel, so
    that an alpha of any shape with one value can be assigned."""
    layer = make(1)
    _randomize(layer, rng, (1,), ("gamma", "beta"))
    x = rng.standard_normal((5, 1)) * 2.0
    rec("forward with the default alpha_init", layer.forward(x), F64)
    layer.set_param("alpha", rng.uniform(1.0, 2.0, 1))
    _step(rec, layer, x, rng, DYT, prefix="alpha assigned: ")


def dyt_accumulation(rec, make, rng):
    """Two backward calls after one forward: every parameter gradient must be their sum."""
    layer = _dyt_layer(make, rng, (6,), float(rng.uniform(0.3, 1.5)))
    _two_backward_calls(rec, layer, rng, (4, 6), DYT)


DYT_EXERCISE = Exercise(
    "dyt", "DyT", norms.DyT,
    N_("DyT(normalized_shape, alpha_init=0.5): y = gamma * tanh(alpha * x) + beta, input "
       "(*, *normalized_shape); alpha one scalar of shape (1,)"),
    (
        dyt_probe("(4, 6)", (6,), (4, 6)),
        dyt_probe("(2, 3, 5), rank 3", (5,), (2, 3, 5)),
        dyt_probe("(2, 3, 4, 5), normalized_shape (4, 5)", (4, 5), (2, 3, 4, 5)),
        dyt_probe("(4, 6) float32", (6,), (4, 6), dtype=np.float32),
        dyt_probe("one sample (1, 6)", (6,), (1, 6)),
        dyt_probe("one channel (5, 1)", (1,), (5, 1)),
        dyt_probe("tanh saturated, alpha ~ 3 (4, 6)", (6,), (4, 6), alpha=(2.5, 4.0), scale=3.0),
        dyt_probe("tanh nearly linear, alpha ~ 0.05 (4, 6)", (6,), (4, 6), alpha=(0.03, 0.08)),
        dyt_probe("negative alpha (3, 2, 4)", (4,), (3, 2, 4), alpha=(-1.5, -0.3), scale=2.0),
        Probe("default alpha_init, then alpha assigned (5, 1)", dyt_assigned_alpha),
        Probe("gradients accumulate (4, 6)", dyt_accumulation),
    ),
    (6,), (4, 6), difficulty=1, minutes=15,
)

# --- GroupNorm --------------------------------------------------------------------------------
GN = ("gamma", "beta")
GROUPNORM = Exercise(
    "groupnorm", "GroupNorm", norms.GroupNorm,
    N_("GroupNorm(num_groups, num_channels, eps): input (N, C, *spatial)"),
    (
        norm_probe("(3, 6), G=3", (3, 6), (6,), (3, 6), GN),
        norm_probe("(2, 6, 5), G=2, rank 3", (2, 6), (6,), (2, 6, 5), GN),
        norm_probe("(2, 6, 3, 2), G=3, rank 4", (3, 6), (6,), (2, 6, 3, 2), GN),
        norm_probe("(2, 4, 3), G=1", (1, 4), (4,), (2, 4, 3), GN),
        norm_probe("(2, 4, 3), G=C=4", (4, 4), (4,), (2, 4, 3), GN),
        norm_probe("(2, 6, 5) float32", (2, 6), (6,), (2, 6, 5), GN, dtype=np.float32),
        norm_probe("constant group (2, 4, 3), G=2", (2, 4), (4,), (2, 4, 3), GN,
                   edit=_constant((0, slice(0, 2)))),
        norm_probe("small variance (2, 6, 5), G=2", (2, 6), (6,), (2, 6, 5), GN, scale=3e-3),
        accumulation_probe((2, 6), (6,), (2, 6, 5), GN),
    ),
    (2, 6), (3, 6, 2), difficulty=3, minutes=35,
)

