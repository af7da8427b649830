"""Softmax and attention: Softmax, LogSoftmax, CrossEntropyLoss, multi-head self-attention,
QK-norm."""

import numpy as np

from ... import nn
from .. import references
from ...i18n import N_
from .base import (Exercise, Probe, _lifted, _step, _tol, _two_backward_calls, accumulation_probe,
                   norm_probe)


# --- Softmax ----------------------------------------------------------------------------------
# The probes Softmax and LogSoftmax share: ranks 1 to 3, every axis, float32, large logits.
AXIS_PROBES = (
        norm_probe("(4, 6), axis=-1", (-1,), None, (4, 6), ()),
        norm_probe("(6,), rank 1", (-1,), None, (6,), ()),
        norm_probe("(2, 3, 5), axis=1", (1,), None, (2, 3, 5), ()),
        norm_probe("(3, 4, 2), axis=0", (0,), None, (3, 4, 2), ()),
        norm_probe("(2, 5, 3), axis=-2", (-2,), None, (2, 5, 3), ()),
        norm_probe("(4, 6) float32", (-1,), None, (4, 6), (), dtype=np.float32),
        norm_probe("logits around 1000 (3, 5)", (-1,), None, (3, 5), (), scale=3.0, shift=1000.0),
        norm_probe("logits around 100, float32 (3, 5)", (-1,), None, (3, 5), (), dtype=np.float32,
                   scale=3.0, shift=100.0),
        # two logits per row far above the rest: only the max shift keeps exp finite (a shift
        # by the mean or the min overflows, beyond 89 in float32 and 709 in float64), and the
        # two leaders keep the softmax and its gradient away from 0
        norm_probe("two logits + 200, float32 (3, 5)", (-1,), None, (3, 5), (), dtype=np.float32,
                   edit=_lifted((..., [1, 3]), 200.0)),
        norm_probe("two logits + 2000 (3, 5)", (-1,), None, (3, 5), (), edit=_lifted((..., [1, 3]), 2000.0)),
)

SOFTMAX = Exercise(
    "softmax", "Softmax", nn.Softmax,
    N_("Softmax(axis=-1): any shape, forward and backward along the axis; no parameters"),
    AXIS_PROBES + (
        norm_probe("peaked (4, 6), logits * 20", (-1,), None, (4, 6), (), scale=20.0),
    ),
    (-1,), (4, 6), difficulty=1, minutes=15,
)


# --- CrossEntropyLoss -------------------------------------------------------------------------
def ce_probe(label, n, c, dtype=np.float64, scale=1.0, shift=0.0, wrong_by=0.0, kwargs=None):
    """The loss and dlogits of CrossEntropyLoss(**kwargs) on logits (n, c) and random integer
    targets, with a random scalar upstream gradient; ``wrong_by`` lowers the target's logit in
    the first half of the rows, making those predictions confident and wrong."""
    def run(rec, make, rng):
        layer = make(**(kwargs or {}))
        logits = rng.standard_normal((n, c)) * scale + shift
        targets = rng.integers(0, c, n)
        logits[np.arange(n // 2), targets[:n // 2]] -= wrong_by
        logits = logits.astype(dtype)
        loss, kept = layer.forward_input_kept(logits, targets)
        rec("loss", loss, _tol(logits))
        rec("logits unchanged by forward", float(kept), 0, "abs")
        if dtype != np.float64:
            rec("output dtype", str(np.asarray(layer.forward(logits, targets)).dtype), 0, "equal")
        rec("dlogits", layer.backward(float(rng.uniform(0.5, 2.0))), _tol(logits))
    return Probe(label, run)


CROSS_ENTROPY = Exercise(
    "cross_entropy", "CrossEntropyLoss", nn.CrossEntropyLoss,
    N_("CrossEntropyLoss(): logits (N, C), integer targets (N,), mean; backward(dloss) -> dlogits"),
    (
        ce_probe("(8, 5)", 8, 5),
        ce_probe("one sample (1, 3)", 1, 3),
        ce_probe("(16, 10)", 16, 10, scale=3.0),
        ce_probe("(8, 5) float32", 8, 5, dtype=np.float32),
        ce_probe("logits around 1000 (6, 4)", 6, 4, scale=3.0, shift=1000.0),
        ce_probe("confident and wrong (6, 4)", 6, 4, wrong_by=800.0),
    ),
    (), (4, 3), difficulty=2, minutes=20, example_extra=(np.array([0, 2, 1, 0]),),
)


# --- LogSoftmax -------------------------------------------------------------------------------
def _lowered(index, by):
    """An edit that lowers x[index] by ``by``: a confidently wrong entry, whose probability
    exp(-by) underflows to 0 in float64 when by is 800."""
    def edit(x):
        x[index] -= by
    return edit


LOG_SOFTMAX = Exercise(
    "log_softmax", "LogSoftmax", nn.LogSoftmax,
    N_("LogSoftmax(axis=-1): any shape, forward and backward along the axis; no parameters"),
    AXIS_PROBES + (
        norm_probe("confidently wrong (3, 5), one logit - 800", (-1,), None, (3, 5), (),
                   edit=_lowered((0, 2), 800.0)),
    ),
    (-1,), (4, 6), difficulty=1, minutes=15,
)

# --- attention --------------------------------------------------------------------------------
ATT = ("wq", "wk", "wv", "wo")


def attention_probe(label, d_model, n_heads, xshape, causal, dtype=np.float64, scale=1.0):
    """A forward and backward of MultiheadSelfAttention(d_model, n_heads, causal=causal) with
    random (C, C) weights. x is drawn with standard deviation scale / sqrt(C), so that the
    scores have a standard deviation of about scale**2 (1 for ordinary scores)."""
    return norm_probe(label, (d_model, n_heads), (d_model, d_model), xshape, ATT, dtype=dtype,
                      scale=scale / np.sqrt(d_model), kwargs={"causal": causal})


ATTENTION = Exercise(
    "attention", "MultiheadSelfAttention", references.MultiheadSelfAttention,
    N_("MultiheadSelfAttention(d_model, n_heads, causal): x (B, T, C); wq, wk, wv, wo"),
    (
        attention_probe("(2, 5, 8), H=2", 8, 2, (2, 5, 8), False),
        attention_probe("(2, 5, 8), H=2, causal", 8, 2, (2, 5, 8), True),
        attention_probe("(2, 4, 6), H=3, causal", 6, 3, (2, 4, 6), True),
        attention_probe("(2, 4, 6), H=1", 6, 1, (2, 4, 6), False),
        attention_probe("(2, 4, 6), H=1, causal", 6, 1, (2, 4, 6), True),
        attention_probe("(2, 3, 4), H=C=4, causal", 4, 4, (2, 3, 4), True),
        attention_probe("(2, 5, 8) float32, H=2, causal", 8, 2, (2, 5, 8), True, dtype=np.float32),
        attention_probe("one position (2, 1, 8), H=2, causal", 8, 2, (2, 1, 8), True),
        attention_probe("scores ~ 150, float32 (2, 4, 8), H=4, causal", 8, 4, (2, 4, 8), True,
                        dtype=np.float32, scale=12.0),
        attention_probe("scores ~ 1000 (2, 4, 8), H=2", 8, 2, (2, 4, 8), False, scale=32.0),
        accumulation_probe((8, 2), (8, 8), (2, 4, 8), ATT, kwargs={"causal": True}),
    ),
    (4, 2), (2, 3, 4), difficulty=3, minutes=45,
)

# --- qk_norm ----------------------------------------------------------------------------------
QK = ("wq", "wk", "wv", "wo", "gamma_q", "gamma_k")


def _qk_layer(make, rng, d_model, n_heads, causal):
    """QKNormSelfAttention(d_model, n_heads, causal=causal) with random (C, C) weights and
    random QK-norm weights (D,), never the initial ones."""
    layer = make(d_model, n_heads, causal=causal)
    for name in QK:
        shape = (d_model // n_heads,) if name.startswith("gamma") else (d_model, d_model)
        layer.set_param(name, rng.standard_normal(shape))
    return layer


def qk_norm_probe(label, d_model, n_heads, xshape, causal, dtype=np.float64, scale=1.0):
    """A forward and backward of QKNormSelfAttention; x is drawn with standard deviation
    scale / sqrt(C). A tiny ``scale`` makes q and k so small that eps matters in the RMS: the
    norm of q and the norm of q / sqrt(D) then differ."""
    def run(rec, make, rng):
        layer = _qk_layer(make, rng, d_model, n_heads, causal)
        x = (rng.standard_normal(xshape) * scale / np.sqrt(d_model)).astype(dtype)
        _step(rec, layer, x, rng, QK)
    return Probe(label, run)


def qk_norm_accumulation(rec, make, rng):
    layer = _qk_layer(make, rng, 8, 2, True)
    _two_backward_calls(rec, layer, rng, (2, 4, 8), QK)


QK_NORM = Exercise(
    "qk_norm", "QKNormSelfAttention", references.QKNormSelfAttention,
    N_("QKNormSelfAttention(d_model, n_heads, causal): self-attention, RMSNorm on each head's q and "
       "k; wq, wk, wv, wo, gamma_q, gamma_k"),
    (
        qk_norm_probe("(2, 5, 8), H=2", 8, 2, (2, 5, 8), False),
        qk_norm_probe("(2, 5, 8), H=2, causal", 8, 2, (2, 5, 8), True),
        qk_norm_probe("(2, 4, 12), H=3, causal", 12, 3, (2, 4, 12), True),
        qk_norm_probe("(2, 4, 6), H=1", 6, 1, (2, 4, 6), False),
        qk_norm_probe("(2, 5, 8) float32, H=4, causal", 8, 4, (2, 5, 8), True, dtype=np.float32),
        qk_norm_probe("one position (2, 1, 8), H=2", 8, 2, (2, 1, 8), False),
        qk_norm_probe("large x, scale ~ 30 (2, 4, 8), H=2", 8, 2, (2, 4, 8), False, scale=30.0),
        qk_norm_probe("q and k near 0, eps matters (2, 4, 8), H=2", 8, 2, (2, 4, 8), False,
                      scale=3e-8),
        Probe("gradients accumulate (2, 4, 8), H=2, causal", qk_norm_accumulation),
    ),
    (4, 2), (2, 3, 4), difficulty=3, minutes=50,  # the attention exercise and two RMSNorms
)

