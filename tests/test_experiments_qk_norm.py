"""QK-norm: without it the attention logits of a Pre-LN Transformer grow into the thousands at a
high learning rate and the loss stays at chance; with a norm on q and k they stay within the
bound the norm's weights allow, and the model trains at a learning rate where without it it fails."""

import math

import numpy as np
import pytest

from normcore.experiments import qk_norm
from normcore.nn import MultiheadSelfAttention

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return qk_norm.run(quick=True, seed=0)


def _index(result, variant):
    return list(result["variants"]).index(variant)


def _high(result, key, variant):
    """``result[key]`` of ``variant`` at the high learning rate, seed 0."""
    return result[key][_index(result, variant), result["high_lr_index"], 0]


@pytest.mark.parametrize("qk", ["rmsnorm", "layernorm"])
def test_logits_recomputed_from_the_weights_give_the_attention_s_own_probabilities(qk):
    rng = np.random.default_rng(0)
    attn = MultiheadSelfAttention(8, 2, causal=True, qk_norm=qk, rng=1)
    for norm in (attn.q_norm, attn.k_norm):  # weights away from their initial ones, so a swap would show
        for p in norm.parameters():
            p.data = rng.normal(1.0, 0.5, p.data.shape)
    x = rng.normal(size=(3, 5, 8))
    attn(x)
    P_own = attn._cached()[3]  # (B, H, T, T), what the attention's forward computed
    S, P, allowed = qk_norm.attention_logits(attn, x)
    np.testing.assert_allclose(P, P_own, rtol=1e-10, atol=1e-14)
    assert S.shape == (3, 2, 5, 5) and np.abs(S[..., allowed]).max() > 1.0
    assert allowed.sum() == 15 and allowed[0, 0] and not allowed[0, 1]  # causal: 1 + 2 + ... + 5 pairs


@pytest.mark.parametrize("variant", ["none", "layernorm"])
def test_every_block_s_attention_input_is_found_in_the_model(variant):
    model = qk_norm.model_for(variant, seed=3)
    tokens = qk_norm.copy_task().batch(4, 0)[0]
    found = list(qk_norm.attention_inputs(model, tokens))
    model(tokens)  # the model's own forward, after ours: each attention caches its probabilities
    assert len(found) == len(model.blocks)
    for block, (attn, h) in zip(model.blocks, found):
        assert attn is block.attn
        np.testing.assert_allclose(qk_norm.attention_logits(attn, h)[1], attn._cached()[3], atol=1e-5)


@pytest.mark.parametrize("qk", ["rmsnorm", "layernorm"])
def test_the_bound_holds_and_is_reached_for_the_worst_aligned_query_and_key(qk):
    rng = np.random.default_rng(1)
    attn = MultiheadSelfAttention(8, 2, causal=False, qk_norm=qk, rng=1)
    for norm in (attn.q_norm, attn.k_norm):
        for p in norm.parameters():
            p.data = rng.normal(0.0, 2.0, p.data.shape)
    S, _, _ = qk_norm.attention_logits(attn, rng.normal(size=(64, 6, 8)))
    bound = qk_norm.logit_bound(attn)
    assert np.abs(S).max() <= bound * (1 + 1e-9)
    assert np.abs(S).max() > 0.4 * bound, "the bound should not be vacuous"
    assert qk_norm.logit_bound(MultiheadSelfAttention(8, 2, rng=1)) == math.inf


def test_with_qk_norm_every_measured_logit_stays_within_the_bound_of_the_learned_weights(result):
    for variant in ("layernorm", "rmsnorm"):
        i = _index(result, variant)
        largest, bound = result["max_logit"][i], result["bound"][i]  # (lrs, seeds, measurements, blocks)
        assert np.all(np.isfinite(bound)) and np.all(largest <= bound * (1 + 1e-5)), variant
        assert bound.max() > 4 * bound[..., 0, :].max(), f"{variant}: the gains should grow during training"
        assert (largest / bound).max() > 0.5, f"{variant}: the bound should be nearly reached"


def test_without_qk_norm_the_logits_grow_far_beyond_those_with_it(result):
    largest = {v: _high(result, "max_logit", v).max(axis=-1) for v in result["variants"]}  # (measurements,)
    assert largest["none"][-1] > 20 * largest["none"][0] and largest["none"][-1] > 500, largest["none"]
    for variant in ("layernorm", "rmsnorm"):
        assert largest[variant].max() < 100, (variant, largest[variant])
        assert largest["none"][-1] > 20 * largest[variant][-1], largest


def test_without_qk_norm_attention_collapses_and_the_loss_stays_at_chance(result):
    chance = result["chance_loss"]
    entropy = {v: _high(result, "entropy", v).mean(axis=-1)[-1] for v in result["variants"]}
    final = {v: float(_high(result, "final_loss", v)) for v in result["variants"]}
    assert entropy["none"] < 0.3 and final["none"] > 0.9 * chance, (entropy, final)
    for variant in ("layernorm", "rmsnorm"):
        assert entropy[variant] > 2 * entropy["none"], entropy
        assert final[variant] < qk_norm.TRAINED * chance, final


def test_qk_norm_trains_at_a_learning_rate_where_without_it_the_model_fails(result):
    lrs, trains = result["lrs"], result["trains"][..., 0]  # (variants, lrs), seed 0

    def largest_trained(variant):
        ok = trains[_index(result, variant)]
        return lrs[ok].max() if ok.any() else 0.0

    assert largest_trained("none") > 0, "without QK-norm the model should train at the lowest learning rate"
    for variant in ("layernorm", "rmsnorm"):
        assert largest_trained(variant) > largest_trained("none"), (variant, trains)


@pytest.mark.parametrize("seed", [2])  # the full run draws seeds 0 and 1
def test_the_failure_and_its_fix_hold_for_other_seeds(seed, result):
    """100 steps, not the quick run's 150: measured on seeds 2 and 3, without QK-norm the loss is
    at chance (0.997 and 1.005 of it) with logits of 9,500 and 1,050, with it 0.04 and 0.05 of
    the chance loss with logits of 27 and 25."""
    steps, chance = 100, result["chance_loss"]
    runs = {v: qk_norm.train(v, qk_norm.HIGH_LR, steps, seed) for v in ("none", "rmsnorm")}
    final = {v: qk_norm.final_loss(r["loss"]) for v, r in runs.items()}
    largest = {v: r["max_logit"][-1].max() for v, r in runs.items()}
    assert final["none"] > 0.9 * chance and final["rmsnorm"] < qk_norm.TRAINED * chance, final
    assert largest["none"] > 20 * largest["rmsnorm"], largest


def test_plot_writes_two_pngs(result, tmp_path):
    paths = qk_norm.plot(result, tmp_path)
    assert [p.name for p in paths] == ["qk_norm.png", "qk_norm_logits.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)


def test_with_qk_norm_the_largest_logit_still_grows_with_the_learning_rate(result):
    """QK-norm slows the growth, it does not stop it: the learned gains let the bound, and the
    logits under it, grow with the learning rate (the full run: about 3 at lr 1e-4, 200 at lr 1)."""
    low = int(np.argmin(result["lrs"]))
    for variant in ("layernorm", "rmsnorm"):
        i = _index(result, variant)
        last = result["max_logit"][i, :, 0, -1].max(axis=-1)  # (lrs,), seed 0, after training
        first = result["max_logit"][i, :, 0, 0].max(axis=-1)
        assert last[result["high_lr_index"]] > 3 * last[low], (variant, last)
        assert last[result["high_lr_index"]] > 3 * first[result["high_lr_index"]], (variant, last, first)
