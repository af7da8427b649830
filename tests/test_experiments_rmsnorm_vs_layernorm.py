"""RMSNorm vs LayerNorm in the same Pre-LN Transformer: both learn far below the uniform guess,
their final losses differ by less than the spread over initialisations, and the timings of both
tiers are measured (their sizes are reported, never asserted)."""

import numpy as np
import pytest

from normcore.experiments import rmsnorm_vs_layernorm as exp

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    # two initialisations (seeds 0 and 1, each with its own batches): the verdicts below are
    # checked on each, so no other initialisation is trained here
    return exp.run(quick=True, seed=0)


def _by_norm(result, key):
    return dict(zip(result["norms"], result[key]))


def test_both_norms_learn_far_below_the_uniform_guess(result):
    chance = result["chance_loss"]
    for norm, final in _by_norm(result, "final_loss").items():
        assert np.all(final < 0.25 * chance), f"{norm} did not learn: final losses {final}, chance {chance:.2f}"
    for norm, accuracy in _by_norm(result, "accuracy").items():
        assert np.all(accuracy[:, -exp.FINAL_WINDOW:].mean(axis=-1) > 0.8), f"{norm}: accuracy {accuracy[:, -1]}"


def test_the_final_losses_differ_by_less_than_the_spread_over_initialisations(result):
    final = _by_norm(result, "final_loss")
    gap = abs(np.median(final["rmsnorm"]) - np.median(final["layernorm"]))
    widest = max(np.ptp(f) for f in final.values())
    assert gap < widest, f"medians {gap:.4f} apart, the widest spread over initialisations is {widest:.4f}"


def test_the_difference_is_small_against_the_uniform_guess(result):
    difference = result["final_loss_difference"]  # RMSNorm - LayerNorm, per initialisation
    np.testing.assert_allclose(difference, result["final_loss"][1] - result["final_loss"][0])
    assert np.all(np.abs(difference) < 0.03 * result["chance_loss"]), difference


def test_the_runs_are_deterministic():
    again = exp.train("rmsnorm", 5, seed=0)["loss"]
    np.testing.assert_array_equal(again, exp.train("rmsnorm", 5, seed=0)["loss"])


def test_every_timing_has_its_shape_and_is_positive_and_finite(result):
    tiers, norms = len(exp.TIERS), len(exp.NORMS)
    for key in ("step_seconds", "norm_seconds"):
        t = result[key]
        assert t.ndim == 3 and t.shape[:2] == (tiers, norms) and t.shape[2] >= 5, (key, t.shape)
        assert np.all(np.isfinite(t)) and np.all(t > 0), key
    for key in ("step_ratio", "norm_ratio", "expected_step_ratio"):
        assert result[key].shape == (tiers,) and np.all(np.isfinite(result[key])) and np.all(result[key] > 0), key
    assert result["norm_share"].shape == (tiers, norms) and np.all(result["norm_share"] > 0)


def test_the_ratios_are_rmsnorm_over_layernorm_paired_by_round():
    # Fixed seconds, not measured ones (a test never depends on the machine's speed).
    ln, rms = exp.NORMS.index("layernorm"), exp.NORMS.index("rmsnorm")
    load = np.array([1.0, 1.0, 4.0])  # (rounds,)
    norm = np.zeros((2, 2, 3))  # (tiers, norms, rounds)
    norm[:, ln], norm[:, rms] = 1e-3 * load, 0.7e-3 * load  # RMSNorm takes 0.7 of LayerNorm's time
    step = np.zeros((2, 2, 3))
    step[:, ln] = 100e-3 * load
    step[:, rms] = step[:, ln] - exp.N_NORMS * (norm[:, ln] - norm[:, rms])  # only the norms changed
    r = exp.ratios(step, norm)
    np.testing.assert_allclose(r["norm_ratio_rounds"], np.full((2, 3), 0.7))
    np.testing.assert_allclose(r["norm_ratio"], [0.7, 0.7])
    share = exp.N_NORMS * 1e-3 / 100e-3  # LayerNorm's share of its step
    np.testing.assert_allclose(r["norm_share"][:, ln], [share, share])
    np.testing.assert_allclose(r["step_ratio"], [1 - 0.3 * share] * 2)
    np.testing.assert_allclose(r["expected_step_ratio"], r["step_ratio"])  # the share predicts it exactly
    # paired by round: per-round ratios 0.6, 0.7, 0.9 have median 0.7; the ratio of the two
    # medians would be 1.8 / 2 = 0.9
    norm[:, ln], norm[:, rms] = [1.0, 4.0, 2.0], [0.6, 2.8, 1.8]
    np.testing.assert_allclose(exp.ratios(step, norm)["norm_ratio"], [0.7, 0.7])


def test_the_interval_of_the_median_comes_from_order_statistics():
    assert exp.median_interval(np.arange(100.0)[::-1]) == (39.0, 60.0)  # k = (100 - 19.6) // 2 = 40
    assert exp.median_interval(np.array([3.0, 1.0, 2.0])) == (1.0, 3.0)  # too few values: the range


def test_the_model_has_nine_norms_of_the_asked_kind_and_tier():
    from normcore import fast, norms
    for tier, module in (("reference", norms), ("fast", fast)):
        model = exp.make_model("rmsnorm", tier, seed=0)
        found = [m for _, m in model.named_modules() if type(m).__name__ in ("LayerNorm", "RMSNorm")]
        assert len(found) == exp.N_NORMS
        assert all(type(m) is module.RMSNorm for m in found), tier


def test_plot_writes_two_pngs(result, tmp_path):
    paths = exp.plot(result, tmp_path)
    assert [p.name for p in paths] == ["rmsnorm_vs_layernorm.png", "rmsnorm_vs_layernorm_time.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
