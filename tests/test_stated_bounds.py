"""Every inequality the material states, searched for a counterexample on normcore's own layers.

Each ``Bound`` below is one inequality the README, the notebooks' sources, the docs pages, the
practice catalog or a docstring states: ``measure`` computes the quantity on normcore's layer
for one drawn case, ``limit`` the bound the material gives. ``test_no_counterexample`` draws
cases over every parameter the bound quantifies over (shapes, weights and gains, biases,
input scales, eps), bounded and seeded, and runs adversarial constructions first (large
biases, a single outlier, a tiny eps, one head taking all the scale). Each bound also carries
``wrong``: a plausible but false bound (too tight, or the bias-free bound applied to a layer
with a bias); ``test_the_search_breaks_a_wrong_bound`` checks that the same search finds its
counterexample, so a search that cannot fail would show.

``REGISTRY`` lists the sentences that state a bound with the test that guards each (or why a
phrase that looks like one is not a bound on normcore's numbers: a measured value asserted by
its experiment's test, a shape or display limit, a paper's claim).
``test_every_bound_in_the_material_is_registered`` scans the material for bound-like phrases
and fails on one the registry does not cover, so a new chapter's bounds cannot go unguarded.
"""

import ast
import dataclasses
import math
import pathlib
import re
import tomllib
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as st

import normcore as nc
from normcore.experiments.qk_norm import attention_logits, logit_bound
from normcore.nn.activations import erfc, log_softmax, softmax
from normcore.norms.standardization import size_scale
from norm_tiers import suite_settings

ROOT = pathlib.Path(__file__).resolve().parents[1]
REL = 1e-9  # rounding: every bound here is an exact inequality, checked in float64


# --- the cases: every parameter a bound quantifies over, drawn ---------------------------------
def _scale(data, low, high):
    """10 ** k for an integer k drawn in [low, high]: magnitudes across many decades."""
    return 10.0 ** data.draw(st.integers(low, high))


def _rng(data):
    return np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))


def _outlier(data, rng, x):
    """x, with one entry of one row pushed out by up to 1e12 times its scale (or left alone)."""
    if data.draw(st.booleans()):
        x = x.copy()
        index = tuple(rng.integers(0, n) for n in x.shape)
        x[index] += np.abs(x).max() * _scale(data, 0, 12) * rng.choice([-1.0, 1.0])
    return x


def _set_all(module, rng, gain, bias):
    """Every parameter of ``module`` random: weights (name ends in "weight") of size ``gain``,
    biases of size ``bias``, each sign and size drawn per entry."""
    for name, p in module.named_parameters():
        size = gain if name.endswith("weight") else bias
        p.data = rng.standard_normal(p.data.shape) * size


def _gain_bound(norm):
    """max|gamma|."""
    return float(np.abs(norm.weight.data).max())


def _bias_rms(norm):
    """RMS of the norm's bias (0 without one)."""
    return 0.0 if getattr(norm, "bias", None) is None else float(np.sqrt((norm.bias.data ** 2).mean()))


# --- LayerNorm and BatchNorm: the largest entry of a standardised row -------------------------
def draw_layernorm(data, largest_offset=6):
    """Rows of D values of any scale, offset by up to 10 ** ``largest_offset`` times their spread
    (beyond about 1e15 the spread is at the rounding level of the mean), maybe one outlier."""
    rng, D = _rng(data), data.draw(st.integers(2, 64))
    spread = _scale(data, -100, 100)
    x = rng.standard_normal((data.draw(st.integers(1, 8)), D)) * spread
    x = x + spread * _scale(data, 0, largest_offset) * data.draw(st.sampled_from([0.0, 1.0, -1.0]))
    return {"x": _outlier(data, rng, x), "eps": _scale(data, -300, 0), "D": D}


def draw_layernorm_rounding(data):
    return draw_layernorm(data, largest_offset=20)


def measure_layernorm(case):
    ln = nc.LayerNorm(case["D"], eps=case["eps"], elementwise_affine=False)
    return float(np.abs(ln(case["x"])).max())


def draw_batchnorm(data):
    rng, n = _rng(data), data.draw(st.integers(2, 64))
    x = rng.standard_normal((n, data.draw(st.integers(1, 6)))) * _scale(data, -100, 100)
    return {"x": _outlier(data, rng, x), "eps": _scale(data, -300, 0), "n": n}


def measure_batchnorm(case):
    bn = nc.BatchNorm1d(case["x"].shape[1], eps=case["eps"], affine=False)
    return float(np.abs(bn(case["x"])).max())  # training mode: the batch's own statistics


# --- QK-norm: the attention logits -------------------------------------------------------------
def draw_attention(data, qk_norm=None, bias=None):
    """A MultiheadSelfAttention with QK-norm, every weight, gain and bias random, and its input."""
    rng = _rng(data)
    H, D = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 8))
    qk_norm = qk_norm or data.draw(st.sampled_from(["rmsnorm", "layernorm"]))
    bias = data.draw(st.booleans()) if bias is None else bias
    attn = nc.MultiheadSelfAttention(H * D, H, causal=data.draw(st.booleans()), bias=bias, qk_norm=qk_norm, rng=0)
    if qk_norm == "layernorm" and bias and data.draw(st.booleans()):
        attn.k_norm = nc.LayerNorm(D)  # a QK-LayerNorm with a key bias too (the full bound's b_k)
    _set_all(attn, rng, _scale(data, -2, 2), _scale(data, -2, 1))
    for part in (attn.q, attn.k):  # projections as a high learning rate leaves them
        part.weight.data *= _scale(data, -3, 4)
    for norm in (attn.q_norm, attn.k_norm):
        norm.eps = _scale(data, -300, -1)
    x = rng.standard_normal((data.draw(st.integers(1, 3)), data.draw(st.integers(1, 6)), H * D))
    return {"attn": attn, "x": _outlier(data, rng, x * _scale(data, -3, 3))}


def draw_attention_bias_free(data):
    """RMSNorm, or a LayerNorm without bias (bias=False leaves q_norm and k_norm without beta)."""
    qk_norm = data.draw(st.sampled_from(["rmsnorm", "layernorm"]))
    return draw_attention(data, qk_norm, bias=None if qk_norm == "rmsnorm" else False)


def draw_attention_with_bias(data):
    return draw_attention(data, "layernorm", bias=True)


def largest_logit(case):
    S, _, _ = attention_logits(case["attn"], case["x"])
    return float(np.abs(S).max())


def bias_free_bound(case):
    """sqrt(D) max|gamma_q| max|gamma_k|."""
    attn = case["attn"]
    return math.sqrt(attn.head_dim) * _gain_bound(attn.q_norm) * _gain_bound(attn.k_norm)


def full_bound(case):
    """sqrt(D) max|g_q g_k| + |g_q * b_k| + |b_q * g_k| + |b_q . b_k| / sqrt(D) (the experiment's)."""
    return logit_bound(case["attn"])


def full_bound_without_the_query_bias_term(case):
    attn = case["attn"]
    return full_bound(case) - float(np.linalg.norm(attn.q_norm.bias.data * attn.k_norm.weight.data))


def draw_whole_projection(data):
    """q and k normalised by one RMSNorm over all C = H * D channels (OLMo 2's QK-norm), each
    with a gain of C entries; one head's projection possibly scaled far above the others'."""
    rng = _rng(data)
    H, D = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 8))
    q = rng.standard_normal((2, data.draw(st.integers(1, 6)), H * D)) * _scale(data, -3, 3)
    k = q.copy() if data.draw(st.booleans()) else rng.standard_normal(q.shape) * _scale(data, -3, 3)
    if data.draw(st.booleans()):  # one head takes (almost) all of the scale
        head = rng.integers(0, H)
        for t in (q, k):
            t[..., head * D:(head + 1) * D] *= _scale(data, 0, 8)
    norms = [nc.RMSNorm(H * D, eps=_scale(data, -300, -1)) for _ in range(2)]
    signs = data.draw(st.booleans())  # gains of one size, random signs: where the bound is reached
    for norm in norms:
        norm.weight.data = (rng.choice([-1.0, 1.0], H * D) if signs else rng.standard_normal(H * D)) \
            * _scale(data, -2, 2)
    return {"q": q, "k": k, "norms": norms, "H": H, "D": D}


def _heads(t, H, D):
    B, T, _ = t.shape
    return t.reshape(B, T, H, D).transpose(0, 2, 1, 3)


def largest_whole_projection_logit(case):
    H, D = case["H"], case["D"]
    q, k = (_heads(norm(t), H, D) for norm, t in zip(case["norms"], (case["q"], case["k"])))
    return float(np.abs(q @ k.swapaxes(-1, -2)).max() / math.sqrt(D))


def whole_projection_bound(case):
    """H sqrt(D) max|gamma_q| max|gamma_k|: one head's share of |q_hat|^2 <= C can be all of it."""
    return case["H"] * math.sqrt(case["D"]) * _gain_bound(case["norms"][0]) * _gain_bound(case["norms"][1])


def per_head_bound_on_the_whole_projection(case):
    return whole_projection_bound(case) / case["H"]


def largest_logit_scaled_before_the_norm(case):
    """The slip: q / sqrt(D) normalised, so the scale is undone: S = q_norm(q / sqrt(D)) k_hat^T."""
    attn, x = case["attn"], case["x"]
    H, D = attn.num_heads, attn.head_dim
    q, k = _heads(attn.q(x), H, D), _heads(attn.k(x), H, D)
    return float(np.abs(attn.q_norm(q / math.sqrt(D)) @ attn.k_norm(k).swapaxes(-1, -2)).max())


def after_scale_bound(case):
    """D max|gamma_q| max|gamma_k|."""
    return math.sqrt(case["attn"].head_dim) * bias_free_bound(case)


def draw_rmsnorm_attention(data):
    return draw_attention(data, "rmsnorm")


# --- Peri-LN: what the branches add to the stream ----------------------------------------------
def draw_peri(data, unit_gains=False):
    """A stack of Peri-LN blocks or of reordered ones (OLMo 2's x + Norm(F(x)): Peri-LN's output
    norms without the input norms), every weight random and possibly huge; the output norms'
    gains and biases random too (or gamma = 1, beta = 0 with ``unit_gains``)."""
    rng, H = _rng(data), data.draw(st.integers(1, 2))
    C, norm = H * data.draw(st.integers(1, 4)), data.draw(st.sampled_from(["rmsnorm", "layernorm"]))
    position = data.draw(st.sampled_from(["peri", "reordered"]))
    blocks = [nc.TransformerBlock(C, H, norm=norm, position=position, causal=data.draw(st.booleans()), rng=i)
              for i in range(data.draw(st.integers(1, 4)))]
    for block in blocks:
        _set_all(block, rng, _scale(data, -2, 3), _scale(data, -2, 1))
        for out in (block.norm1_out, block.norm2_out):
            out.eps = _scale(data, -300, -1)
            if unit_gains:
                out.weight.data = np.ones_like(out.weight.data)
                if getattr(out, "bias", None) is not None:
                    out.bias.data = np.zeros_like(out.bias.data)
    x = rng.standard_normal((2, data.draw(st.integers(1, 5)), C)) * _scale(data, -2, 2)
    return {"blocks": blocks, "x": _outlier(data, rng, x)}


def draw_peri_unit_gains(data):
    return draw_peri(data, unit_gains=True)


def _token_rms(h):
    return np.sqrt((h ** 2).mean(axis=-1))


def _branch_bound(norm, with_bias=True):
    """The largest RMS a Norm_out can give a token: max|gamma| (+ RMS(beta) for a LayerNorm)."""
    return _gain_bound(norm) + (_bias_rms(norm) if with_bias else 0.0)


def _relative(excess, scale):
    """An excess over a bound relative to the bound's scale (rounding is relative too)."""
    return float((excess / scale).max())


def peri_stream_excess(case, with_bias=True):
    """max over tokens and depths l of RMS(h_l) - RMS(x) - (sum of the branch bounds up to l),
    and of each branch's RMS over its bound, relative to the bound: <= 0 where the triangle
    inequality holds."""
    h, budget, worst = case["x"], 0.0, -math.inf
    for block in case["blocks"]:
        bounds = [_branch_bound(out, with_bias) for out in (block.norm1_out, block.norm2_out)]
        added = block.norm1_out(block.attn(block.norm1(h) if block.position == "peri" else h))
        worst = max(worst, _relative(_token_rms(added) - bounds[0], bounds[0]))
        budget += sum(bounds)
        h = block(h)
        start = _token_rms(case["x"])
        worst = max(worst, _relative(_token_rms(h) - start - budget, start + budget))
    return worst


def peri_unit_excess(case):
    """max over tokens and depths l of RMS(h_l) - RMS(x) - 2 l (the notebook's gamma_out = 1)."""
    h, worst, start = case["x"], -math.inf, _token_rms(case["x"])
    for depth, block in enumerate(case["blocks"], start=1):
        h = block(h)
        worst = max(worst, _relative(_token_rms(h) - start - 2 * depth, start + 2 * depth))
    return worst


def peri_unit_excess_one_branch(case):
    """The same with l instead of 2 l: as if a block had one branch."""
    h, worst, start = case["x"], -math.inf, _token_rms(case["x"])
    for depth, block in enumerate(case["blocks"], start=1):
        h = block(h)
        worst = max(worst, _relative(_token_rms(h) - start - depth, start + depth))
    return worst


# --- activations and numerics ------------------------------------------------------------------
def draw_gelu(data):
    centre = data.draw(st.sampled_from([-2.699, 2.699, 0.0]))  # the largest gaps, and anywhere
    spread = _scale(data, -6, 2)
    return {"x": centre + np.random.default_rng(data.draw(st.integers(0, 999))).uniform(-spread, spread, 4001)}


def gelu_gap(case):
    return float(np.abs(nc.GELU("tanh")(case["x"]) - nc.GELU()(case["x"])).max())


def draw_logits(data):
    rng = _rng(data)
    x = rng.standard_normal((data.draw(st.integers(1, 4)), data.draw(st.integers(1, 50))))
    x = x * _scale(data, -300, 300)
    if data.draw(st.booleans()):  # one logit far above the rest: p = 1 to rounding
        x[:, 0] = np.abs(x).max() * 1e3 + 1.0
    return {"x": x}


def largest_log_probability(case):
    """max log p (<= 0: logp = z - log(sum exp(z)), a sum of at least 1); NaN or inf if not finite."""
    logp = log_softmax(case["x"])
    return float(logp.max()) if np.all(np.isfinite(logp)) else math.inf


def largest_probability(case):
    return float(softmax(case["x"]).max())


def draw_softcap(data):
    """Logits over many decades (tanh saturated far out), a cap from 1e-3 to 1e3."""
    rng = _rng(data)
    x = rng.standard_normal((data.draw(st.integers(1, 4)), data.draw(st.integers(1, 20))))
    return {"x": x * _scale(data, -3, 300), "cap": _scale(data, -3, 3) * data.draw(st.floats(1.0, 9.0))}


def largest_capped(case):
    """max |SoftCap(cap)(x)|: c * tanh(x / c) stays within the cap."""
    return float(np.abs(nc.SoftCap(case["cap"])(case["x"])).max())


def draw_erfc_middle(data):
    return {"x": np.random.default_rng(data.draw(st.integers(0, 999))).uniform(0.5, 2.0, 2001)}


def smallest_erfc_below_minus(case):
    """-min erfc(x) on [0.5, 2): the docstring's "erfc > 0.0046" read as -erfc < -0.0046."""
    return -float(erfc(case["x"]).min())


def draw_float16(data):
    """Values across float16's normal range, 6.1e-5 to 65504, of either sign."""
    rng = np.random.default_rng(data.draw(st.integers(0, 999)))
    return {"x": rng.choice([-1.0, 1.0], 4001) * np.exp(rng.uniform(np.log(6.11e-5), np.log(65504.0), 4001))}


def float16_relative_error(case):
    x = case["x"]
    return float(np.abs((x.astype(np.float16).astype(np.float64) - x) / x).max())


def draw_size_scale(data):
    rng = _rng(data)
    k = data.draw(st.integers(-1070, 1020))
    a = rng.standard_normal((3, data.draw(st.integers(1, 8)))) * 2.0 ** k
    if data.draw(st.booleans()):  # just above a power of two, where log2 rounds down
        a.flat[0] = 2.0 ** k * (1 + 2.0 ** -52 * data.draw(st.integers(1, 4)))
    return {"a": a}


def scaled_size(case):
    """max |a / size_scale(a)| over each row."""
    return float(np.abs(case["a"] / size_scale(case["a"], (1,))).max())


# --- the bounds --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Bound:
    """An inequality ``measure(case) <= limit(case)`` over the cases ``draw`` makes; ``wrong``
    (with ``wrong_draw``, default ``draw``) is a false one the same search must break."""

    name: str
    draw: Callable
    measure: Callable
    limit: Callable
    wrong: Callable
    wrong_draw: Callable | None = None
    examples: int = 60


BOUNDS = [
    Bound("layernorm-largest-entry", draw_layernorm, measure_layernorm,
          lambda c: math.sqrt(c["D"] - 1), lambda c: 0.999 * math.sqrt(c["D"] - 1)),
    # in floating point, where the spread is at the rounding level of the mean, the computed
    # mean is off by up to the spread itself, and (|x - m| + |d|) / sqrt(var + d ** 2) <= sqrt(D)
    Bound("layernorm-largest-entry-rounded", draw_layernorm_rounding, measure_layernorm,
          lambda c: math.sqrt(c["D"]), lambda c: math.sqrt(c["D"] - 1), wrong_draw=draw_layernorm_rounding),
    Bound("batchnorm-largest-entry", draw_batchnorm, measure_batchnorm,
          lambda c: math.sqrt(c["n"] - 1), lambda c: 0.999 * math.sqrt(c["n"] - 1)),
    Bound("qk-norm-bias-free", draw_attention_bias_free, largest_logit, bias_free_bound,
          bias_free_bound, wrong_draw=draw_attention_with_bias),
    Bound("qk-norm-with-biases", draw_attention, largest_logit, full_bound,
          full_bound_without_the_query_bias_term, wrong_draw=draw_attention_with_bias),
    Bound("qk-norm-whole-projection", draw_whole_projection, largest_whole_projection_logit,
          whole_projection_bound, per_head_bound_on_the_whole_projection),
    Bound("qk-norm-after-the-scale", draw_rmsnorm_attention, largest_logit_scaled_before_the_norm,
          after_scale_bound, bias_free_bound),
    # the Peri-LN measures are excesses relative to the bound's scale: rounding allows REL
    Bound("peri-ln-branch-and-stream", draw_peri, peri_stream_excess, lambda c: REL,
          lambda c: 0.0, examples=40),
    Bound("peri-ln-stream-unit-gains", draw_peri_unit_gains, peri_unit_excess, lambda c: REL,
          lambda c: 0.0, examples=40),
    Bound("gelu-tanh-gap", draw_gelu, gelu_gap, lambda c: 4.8e-4, lambda c: 4.7e-4),
    Bound("log-softmax-at-most-0", draw_logits, largest_log_probability, lambda c: 0.0,
          lambda c: -1e-300),
    Bound("softmax-at-most-1", draw_logits, largest_probability, lambda c: 1.0, lambda c: 1.0 - 1e-6),
    Bound("erfc-above-0.0046-below-2", draw_erfc_middle, smallest_erfc_below_minus, lambda c: -0.0046,
          lambda c: -0.0047),
    Bound("float16-relative-rounding", draw_float16, float16_relative_error, lambda c: 2.0 ** -11,
          lambda c: 2.0 ** -12),
    Bound("size-scale-at-most-1", draw_size_scale, scaled_size, lambda c: 1.0, lambda c: 0.5),
    Bound("softcap-within-cap", draw_softcap, largest_capped, lambda c: c["cap"], lambda c: 0.99 * c["cap"]),
]
# where the false bound is a different measure against the same limit 0: the branch bound
# without LayerNorm's beta, and one branch per block instead of two
WRONG_MEASURE = {"peri-ln-branch-and-stream": lambda case: peri_stream_excess(case, with_bias=False),
                 "peri-ln-stream-unit-gains": peri_unit_excess_one_branch}


def _adversarial(bound):
    """Constructions that reach or nearly reach each bound, run before the random search."""
    if bound.name == "layernorm-largest-entry":
        return [{"x": np.array([[0.0] * 15 + [1e300]]), "eps": 1e-300, "D": 16},
                {"x": np.array([[1.0, 1.0 + 1e-9]]), "eps": 1e-300, "D": 2}]
    if bound.name == "layernorm-largest-entry-rounded":
        return [{"x": np.array([[1.0, 1.0 + 1e-15]]), "eps": 1e-300, "D": 2},
                {"x": np.array([[1.0] * 7 + [1.0 + 2.0 ** -52]]), "eps": 1e-300, "D": 8}]
    if bound.name == "batchnorm-largest-entry":
        return [{"x": np.array([[0.0]] * 63 + [[1e200]]), "eps": 1e-300, "n": 64}]
    return []


def _check(bound, case, limit, measure):
    value, most = measure(case), limit(case)
    assert value <= most + REL * abs(most), f"{bound.name}: {value!r} > {most!r}"


def _search(bound, limit, draw, measure, shrink=True):
    for case in _adversarial(bound):
        _check(bound, case, limit, measure)
    phases = list(Phase) if shrink else [Phase.explicit, Phase.generate]

    @settings(suite_settings(bound.examples), phases=phases, print_blob=False)
    @given(st.data())
    def search(data):
        _check(bound, draw(data), limit, measure)

    search()


@pytest.mark.parametrize("bound", BOUNDS, ids=[b.name for b in BOUNDS])
def test_no_counterexample(bound):
    _search(bound, bound.limit, bound.draw, bound.measure)


@pytest.mark.parametrize("bound", BOUNDS, ids=[b.name for b in BOUNDS])
def test_the_search_breaks_a_wrong_bound(bound):
    """The same search, on a false bound (too tight, or made for a layer without a bias): it
    must find a counterexample, or the search above could not fail either."""
    with pytest.raises(AssertionError):
        _search(bound, bound.wrong, bound.wrong_draw or bound.draw, WRONG_MEASURE.get(bound.name, bound.measure),
                shrink=False)  # the first counterexample is enough


# --- the registry: every bound-like phrase of the material, and what guards it ----------------
# Each entry: a pattern found in the line that states it, and either the name of a Bound above,
# another test that asserts it ("tests/FILE.py::TEST"), or why the phrase is not a bound on
# normcore's numbers ("not a bound: ..."; "measured: ..." for a number one run measured, which
# its experiment's test asserts).
MEASURED = "measured: one run's number, asserted by the experiment's test"
REGISTRY = [
    # LayerNorm and BatchNorm's largest entry
    (r"cannot exceed \$\\sqrt\{D - 1\}\$|largest possible entry is sqrt\(d - 1\)|最大输出是 sqrt\(d - 1\)"
     r"|stays below the bound|sqrt\{D - 1\}\$ in exact", "layernorm-largest-entry"),
    (r"up to \$\\sqrt\{D\}\$ by rounding", "layernorm-largest-entry-rounded"),
    (r"\|x_hat\| <= sqrt\(n - 1\)|never exceeds sqrt\(7\)|can never exceed sqrt\(n - 1\)"
     r"|不会超过 sqrt\(n - 1\)", "batchnorm-largest-entry"),
    # QK-norm
    (r"logit bound is H times|bounded by \$H\\sqrt\{D\}|H sqrt\(D\) max\|gamma_q\|"
     r"|logit bound loosens H times|logit bound H times|per-head bound\.|\\\|\\hat\{q\}\\\|\^2 \\le C",
     "qk-norm-whole-projection"),
    (r"bound becomes \$D\\max", "qk-norm-after-the-scale"),
    (r"full bound|logit_bound|\|q\.k\| / sqrt\(D\) <= sqrt\(D\) max_i|\(\|u\|, \|w\| <= sqrt\(D\)\)"
     r"|\\\|u\\\|, \\\|w\\\| \\le|\\sqrt\{D\}\\max_i|bound with the biases|bound on the logits that"
     r"|the bias-free bound says|the norms bound the scores", "qk-norm-with-biases"),
    (r"max\|gamma_q\| max\|gamma_k\||\\max\|\\gamma_q\||bias-free LayerNorm|bounded by the norm's learned"
     r"|bounds the attention logits by its learned|under the bound the norm's learned|bound of section 2"
     r"|The gains are learned, so the bound|slows the growth and bounds it"
     r"|bounded attention logits|under the bound in the last column|\*\*The bound\.\*\*|the bound with them|\\le \\frac"
     r"|\\\|\\hat\{q\}\\\| \\le|the bound moves|scales each entry by at|every score is bounded"
     r"|scores are no longer bounded|RMS at most 1|bound by the two|\|q_hat\| <= sqrt\(D\)|\|x_hat\| <= sqrt\(D\)"
     r"|the bound of\s*$|within the bound|the QK-norm bound|, bound \(steps|``bound`` are|The bound QK-RMSNorm puts"
     r"|bounded by the learned gains alone|上界是 sqrt\(D\) max|The bound grows with the learned gains"
     r"|上界会随可学习增益|bounded by sqrt\(D\) times the gains per head|logits 上界是 sqrt\(D\) 乘以增益",
     "qk-norm-bias-free"),
    # Peri-LN
    (r"at most its initial|at most a norm's worth|more than a norm's worth", "peri-ln-stream-unit-gains"),
    (r"norm's worth", "peri-ln-branch-and-stream"),
    # activations and numerics
    (r"differ by at most 4\.8e-4", "gelu-tanh-gap"),
    (r"softmax is shift invariant, and now exp\(z\) <= 1", "softmax-at-most-1"),
    (r"sum that is at least 1|which is at least 1|exp\(z\) <= 1|e\^\{s - m\} \\le 1|every exponent <= 0",
     "log-softmax-at-most-0"),
    (r"erfc > 0\.0046", "erfc-above-0.0046-below-2"),
    (r"same relative error, at most", "float16-relative-rounding"),
    (r"at most 1 in size|squares stay at most 1|power of two (at least as|>= max_A)", "size-scale-at-most-1"),
    (r"at least as accurately as PyTorch", "tests/test_accuracy.py::test_float32_at_least_as_accurate_as_pytorch"),
    # soft-capping
    (r"a smooth bound on logits|The cap bounds the output smoothly|\|y\| <= cap everywhere"
     r"|bounds its attention scores and its final logits smoothly|the cap work as a bound"
     r"|Soft-capping bounds the values themselves", "softcap-within-cap"),
    # the llm_norms notebook's QK-norm section: per head sqrt(D), over the projection H sqrt(D)
    (r"what each bounds|is at most \$\\sqrt\{D\}\$;|one logit is at most \$E/\\sqrt\{D\}"
     r"|The projection's bound is reached only|above the per-head bound|is at most \$\\sqrt\{s_q s_k\}"
     r"|the bound they give, which the logit", "qk-norm-whole-projection"),
    (r"the z-loss bounds nothing", "not a bound on normcore's numbers: the z-loss bounds nothing"),
    # the interview questions on today's LLM norms (bank_llm.toml, measures_llm.py)
    (r"It bounds what each block adds to the residual stream", "peri-ln-branch-and-stream"),
    (r"bounded by the norms' gains alone|\|logit\| <= sqrt\(D\)|QK-norm bounds the scores themselves"
     r"|上界只由增益决定|at most sqrt\(D\) with the initial gains|\(\|q\|, \|k\| <= sqrt\(D\)\)",
     "qk-norm-bias-free"),
    (r"bound is H times larger|上界是按头时的 H 倍|up to H times the per-head bound|按头上界的 H 倍"
     r"|as tightly as QK-norm per head|\|q_h\|, \|k_h\| <= sqrt\(H D\)", "qk-norm-whole-projection"),
    (r"bounds only what the softmax sees|The cap bounds the softmax's input|The cap bounds what the softmax"
     r"|It bounds its output;|both keep the logits bounded|the cap bounds the output only", "softcap-within-cap"),
    (r"nothing bounds it\.", "not a bound on normcore's numbers: a Pre-LN update's growth, measured"),
    # QK-norm over the whole projection, in the attention's docstring
    (r"Every head's logits are bounded by|It bounds the whole query|one head's logit is bounded by"
     r"|per-head bound, reached only", "qk-norm-whole-projection"),
    # measured numbers
    (r"cuts that gap to at most half|\|cosine\| at most 3e-17|\|cosine\| is at most 3e-17"
     r"|GroupNorm does at least as well with 2|stream grows about 4-fold|the stream grows"
     r"|the loss rises by at most 0\.007|removable \(at most 0\.0[0-9]+|which is at most a few thousandths"
     r"|the softmax sees at most 50|by at most 0\.007, as the curse of depth|\|cosine\| at most \$3"
     r"|cuts its train/eval gap to at most", MEASURED),
    (r"at most 0\.005|R\^2 up by at most|moves by at most \$10\^\{-16\}|moved by at most 1e-16"
     r"|differs by at most 1\.5|at most 5e-6|no more than the sampling noise|0\.84 to 0\.92 of it"
     r"|bound grows from 4|\|mean\| <=|paired seeds\)|joined across norms|overlapping bands|lower bound\)"
     r"|this floor is a lower bound|at most 0\.92 of it|one NumPy layer, where each operation"
     r"|a few per cent of a step at most|at most 2e-15|at most 7e-06|51 at most|outputs stay within 1"
     r"|What it keeps from a norm is a bound", MEASURED),
    (r"x [<>]?= ?[0-9.]+x|<= \d\.\dx", "not a bound: the benchmark's targets, measured by normcore bench"),
    # papers' bounds, cited as theirs
    (r"Xiong et al\. bound|理论上 \$O|These are upper bounds|which the bound neither|theory's \$O|grow without bound"
     r"|without bound in|without bound at high|nothing bounds what a branch adds"
     r"|bound how much one update|by a bounded amount|Xiong et al\.'s O\(1/sqrt\(L\)\) bound",
     "not a bound of normcore's: a paper's claim, cited as such"),
    # shapes, masks, arguments, display widths, schedules
    (r"j <= i|<= i\b|T <= max_len|Ts <= max_src_len|Tt <= max_tgt_len|k<=l|eps <= 0|0 <= p < 1"
     r"|a <= 0|x <= 0|0\.5 <= a < 2|at least one (key|id)|keeps at least one key|at least ``full``"
     r"|at least 1\)|\(at least one\)|at least one ``\[\[question|at least its shape"
     r"|either bound may be None|bounds how long"
     r"|at most ``?\w+``? (display )?(columns|characters|seconds)|at most \d+ display columns"
     r"|at most WIDTH|at most ``decimals``|at most every ``interval``|at most MAX_MINUTES|<= 80 columns"
     r"|At least 1\.45 inches"
     r"|at most ``tol``|<= atol|at most CHUNK|at most SUM_ROWS|at most var / 16|rstd at most once"
     r"|at least\s*$|at most 1\s*$|in float32 at least|bound by memory|bound by\s*$|time-bound"
     r"|bound by time|at most a NumPy overflow|<= 0: logp|a layer bound\s*$|pays at least one( latency|\s*$)",
     "not a bound on normcore's numbers"),
    # Batch Renorm's clips: r and d inside or at the bounds of their clip (the probes' regimes,
    # the clip's definition), the warm-up's arguments; exp(x - m) <= 1 is the max shift's reason
    (r"beyond their bounds|inside their bounds|inside its bounds|leaves its bounds|at a bound of its clip"
     r"|The bounds are constants|the clip bounds how far|0 <= hold <= r_steps|exp\(x - m\) <= 1"
     r"|a negative log Z without bound", "not a bound on normcore's numbers: a clip's definition or a probe's regime"),
]


def _strings(path, skip_calls=()):
    """The string constants of a Python file (outside calls to ``skip_calls``), with their line."""
    tree = ast.parse(path.read_text())
    skipped = {id(sub) for node in ast.walk(tree) if isinstance(node, ast.Call)
               and getattr(node.func, "id", None) in skip_calls for sub in ast.walk(node)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skipped]


def _docstrings(path):
    tree = ast.parse(path.read_text())
    return [(node.body[0].lineno, ast.get_docstring(node, clean=False)) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and ast.get_docstring(node, clean=False)]


def material():
    """(where, text) of everything a reader is shown: the README, the docs pages, the notebooks'
    sources (their text cells, not their code), the practice catalog, normcore's docstrings."""
    yield "README.md", (ROOT / "README.md").read_text()
    for path in sorted((ROOT / "normcore" / "docs" / "pages").rglob("*.md")):
        yield str(path.relative_to(ROOT)), path.read_text()
    for path in sorted((ROOT / "notebooks" / "src").glob("*.py")):
        for line, text in _strings(path, skip_calls=("code",)):
            yield f"{path.relative_to(ROOT)}:{line}", text
    for path in sorted((ROOT / "normcore" / "practice" / "questions").glob("bank_*.toml")):
        for q in tomllib.loads(path.read_text(encoding="utf-8"))["question"]:
            texts = [q["answer"], q["answer_zh"]] + [w[k] for w in q.get("wrong", ())
                                                     for k in ("answer", "answer_zh", "why", "why_zh")]
            yield f"{path.relative_to(ROOT)}:{q['id']}", "\n".join(texts)
    for path in sorted((ROOT / "normcore").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        found = _strings(path) if "/practice/catalog/" in rel else _docstrings(path)
        for line, text in found:
            yield f"{rel}:{line}", text


BOUND_LIKE = re.compile(r"\bbound(?:s|ed)?\b|\bat most\b|\bat least\b|\bnever exceeds?\b|\bcannot exceed\b"
                        r"|\blargest possible\b|\bno (?:more|larger) than\b|<=|≤|\\leq?\b"
                        r"|sqrt\(\s*\w\s*-\s*1\s*\)|\\sqrt\{\w\s*-\s*1\}|可能的最大|上界", re.IGNORECASE)


def unregistered():
    """The lines of the material with a bound-like phrase that no registry entry covers."""
    patterns = [re.compile(pattern) for pattern, _ in REGISTRY]
    return [(where, line.strip()) for where, text in material() for line in text.splitlines()
            if BOUND_LIKE.search(line) and not any(p.search(line) for p in patterns)]


def test_every_bound_in_the_material_is_registered():
    missing = unregistered()
    assert not missing, "a bound-like phrase with no guard in REGISTRY (add a Bound and its entry):\n" + \
        "\n".join(f"  {where}: {line}" for where, line in missing)


def test_every_registry_entry_names_a_guard_that_exists_and_is_used():
    lines = [line for _, text in material() for line in text.splitlines()]
    for pattern, guard in REGISTRY:
        assert any(re.search(pattern, line) for line in lines), f"no line of the material matches {pattern!r}"
        if guard.startswith(("not a bound", "measured")):
            continue
        if guard.startswith("tests/"):
            path, test = guard.split("::")
            assert f"def {test}(" in (ROOT / path).read_text(), guard
        else:
            assert guard in {b.name for b in BOUNDS}, guard
    guarded = {guard for _, guard in REGISTRY}
    assert {b.name for b in BOUNDS} <= guarded, "a Bound no registry entry points to"


def test_the_registry_catches_a_new_bound(monkeypatch):
    """A bound a new chapter states without a guard is reported."""
    new = ("notebooks/src/new.py:1", "Its output never exceeds 2 max|gamma| whatever the input.")
    monkeypatch.setattr(__import__(__name__), "material", lambda: iter([new]))
    assert unregistered() == [(new[0], new[1])]
