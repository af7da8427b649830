"""Does LayerNorm act like a tanh? Per token no, its map is exactly linear; across tokens the cloud of
input against normalised output bends only slightly in this toy model (the tanh fit beats the
straight line by a little), and the fitted alpha scales with 1/std of the layer's input."""

import numpy as np
import pytest

from normcore.experiments import layernorm_tanh as lt
from normcore.experiments._positions import tiny_model

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return lt.run(quick=True, seed=0)


def _state(result, key, state):
    return result[key][list(result["states"]).index(state)]  # (seeds, norms)


def test_the_model_learns_the_copy_task(result):
    assert result["final_accuracy"].min() > 0.95, result["final_accuracy"]


def test_every_layernorm_is_measured_in_forward_order(result):
    names = list(result["names"])
    assert len(names) == 2 * result["n_layers"] + 1
    assert names[:2] == ["1.attn", "1.ffn"] and names[-1] == "final"


def test_the_recomputed_x_hat_is_what_each_norm_scaled_by_gamma_and_shifted_by_beta(result):
    assert result["affine_error"] < 1e-5, result["affine_error"]


def test_per_token_the_map_is_exactly_linear_with_slope_one_over_the_token_std(result):
    assert result["token_r2_min"].min() > 1 - 1e-6, result["token_r2_min"].min()
    assert result["token_slope_error"].max() < 1e-4, result["token_slope_error"].max()  # eps aside


def test_the_tanh_beats_the_straight_line_in_every_layer_but_only_marginally(result):
    gain = result["r2_tanh"] - result["r2_line"]
    assert result["r2_line"].min() > 0.9, "the straight line alone explains most of the variance"
    assert gain.min() > 0, f"the tanh should fit at least a little better everywhere: {gain.min():.2e}"
    assert gain.max() < 0.02, f"the S-shape should be weak at this scale: gain up to {gain.max():.4f}"
    removed = result["residual_removed"]
    assert 0.005 < np.median(removed) < 0.15, f"share of the line's residual the tanh removes: {removed}"


def test_without_an_output_scale_a_tanh_fits_worse_than_the_straight_line(result):
    # x_hat has unit variance per token and reaches |x_hat| > 1, which tanh alone cannot
    assert (result["r2_tanh_unscaled"] < result["r2_line"] - 0.05).all()


def test_alpha_times_std_stays_in_a_narrow_range_and_the_slope_at_zero_is_one_over_std(result):
    assert 0.1 < result["alpha_std"].min() and result["alpha_std"].max() < 0.5, result["alpha_std"]
    slope_at_zero = result["c"] * result["alpha_std"]  # c * alpha * std
    assert (np.abs(slope_at_zero - 1) < 0.15).all(), slope_at_zero


def test_alpha_tracks_one_over_std_across_layers(result):
    for state in result["states"]:
        inv_std, alpha = 1 / _state(result, "std", state)[0], _state(result, "alpha", state)[0]
        r = np.corrcoef(np.log(inv_std), np.log(alpha))[0, 1]
        assert r > 0.8, f"{state}: correlation of log alpha with log(1/std) {r:.2f}"


def test_training_adds_to_the_tanh_advantage_in_the_deep_layers_of_seed_0(result):
    # seed 0 only: in the full run one of three seeds' untrained models is already as bent
    deep = slice(-5, None)  # the last two blocks' norms and the final norm
    trained = np.median(_state(result, "residual_removed", "trained")[:, deep])
    init = np.median(_state(result, "residual_removed", "init")[:, deep])
    assert trained > 1.3 * init, f"deep layers: trained {trained:.3f}, init {init:.3f}"


@pytest.mark.parametrize("seed", [1, 2])
def test_at_initialisation_other_seeds_give_the_same_picture(seed):
    task = lt.copy_task()
    model = tiny_model(task, "pre", lt.N_LAYERS, seed, dtype=np.float32).eval()
    _, fits, _ = lt.measure(model, task.batch(16, seed + 10_000)[0])
    gain = fits["r2_tanh"] - fits["r2_line"]
    assert fits["token_r2_min"].min() > 1 - 1e-6
    assert gain.min() > 0 and gain.max() < 0.02, gain
    assert 0.1 < fits["alpha_std"].min() and fits["alpha_std"].max() < 0.5, fits["alpha_std"]


def test_fit_tanh_recovers_a_known_curve():
    x = np.random.default_rng(0).normal(0, 3, 5000)
    alpha, c = lt.fit_tanh(x, 2.0 * np.tanh(0.5 * x))
    assert abs(alpha - 0.5) < 0.02 and abs(c - 2.0) < 0.05, (alpha, c)


def test_recording_leaves_the_model_as_it_was_and_shares_nothing_with_its_caches():
    task = lt.copy_task()
    model = tiny_model(task, "pre", 2, 0, dtype=np.float32).eval()
    tokens = task.batch(4, 0)[0]
    before = model(tokens)
    io = lt.layer_io(model, tokens)
    norms = dict(lt.layernorms(model))
    assert all("forward" not in vars(norm) for norm in norms.values())  # the wrappers are gone
    for name, (x, x_hat, y) in io.items():
        assert not any(np.shares_memory(a, c) for a in (x, x_hat, y) for c in norms[name]._cache[:2])
    np.testing.assert_array_equal(model(tokens), before)


def test_plot_writes_two_pngs(result, tmp_path):
    paths = lt.plot(result, tmp_path)
    assert [p.name for p in paths] == ["layernorm_tanh.png", "layernorm_tanh_alpha.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
