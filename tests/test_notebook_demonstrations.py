"""The demonstrations in the notebooks say what their numbers show.

Each test runs one notebook section's code cells, as the notebook runs them (from the
notebooks' sources, after the notebook's first code cell, the imports), and asserts the
section's claims on the values it computed.
"""

import importlib.util
import sys
from pathlib import Path

import matplotlib
import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("notebook_build", ROOT / "notebooks" / "build.py")
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)


def run_section(topic, heading):
    """Execute the imports cell and every code cell of the section whose Markdown starts with
    ``## heading`` (up to the next ``## ``); return the namespace they filled."""
    matplotlib.use("Agg")
    sys.path.insert(0, str(ROOT / "notebooks"))
    try:
        cells = build.cells(topic)
    finally:
        sys.path.remove(str(ROOT / "notebooks"))
    start = next(i for i, c in enumerate(cells) if c.cell_type == "markdown" and c.source.startswith(f"## {heading}"))
    section = []
    for cell in cells[start + 1:]:
        if cell.cell_type == "markdown" and cell.source.startswith("## "):
            break
        if cell.cell_type == "code":
            section.append(cell.source)
    namespace = {}
    first_code = next(c for c in cells if c.cell_type == "code")
    for source in [first_code.source] + section:
        exec(compile(source, f"{topic} notebook, section {heading}", "exec"), namespace)
    return namespace


@pytest.fixture(scope="module")
def gamma_beta():
    return run_section("batchnorm", "9. Why $\\gamma$ and $\\beta$")


def test_gamma_and_beta_recover_the_identity(gamma_beta):
    assert gamma_beta["identity_error"] < 1e-12          # training mode, this batch's statistics
    assert gamma_beta["identity_error_eval"] < 1e-12     # evaluation mode, the running statistics


def test_the_identity_holds_only_for_the_batch_it_was_set_from(gamma_beta):
    change = gamma_beta["other_batch_change"]            # |y - x| / std(x), per channel, another batch
    assert np.all(change > 0.05) and np.all(change < 1.0)
    assert 0.3 < change.min() and change.max() < 0.65     # "0.3 to 0.6 of it at worst"


def test_layernorm_cannot_undo_every_sample_at_once(gamma_beta):
    error = gamma_beta["layernorm_row_error"]
    assert error[0] < 1e-12
    assert error[1] == pytest.approx(17, abs=0.5) and error[2] == pytest.approx(4, abs=0.5)


@pytest.fixture(scope="module")
def padding():
    return run_section("layernorm", "9. Padded sequences")


def test_padding_pollutes_batchnorm_and_a_mask_fixes_it(padding):
    mean_error, var_error = padding["pad_stats"]["BatchNorm, padding included"]
    assert mean_error > 0.5 and var_error > 0.25           # mean near +0.8, variance near 0.6
    mean_real, var_real = padding["real_token_stats"](padding["outputs"]["BatchNorm, padding included"],
                                                      padding["mask"])
    assert mean_real.mean() == pytest.approx(0.8, abs=0.05)
    assert var_real.mean() == pytest.approx(0.6, abs=0.05)
    mean_error, var_error = padding["pad_stats"]["masked BatchNorm"]
    assert mean_error < 1e-12 and var_error < 1e-4          # mean 0, variance 1 up to eps
    assert padding["masked_vs_alone"] < 1e-12              # = BatchNorm on the real tokens alone


def test_layernorm_needs_no_mask(padding):
    tokens = padding["token_out"]                          # each real token over its own features
    assert np.abs(tokens.mean(axis=1)).max() < 1e-12
    np.testing.assert_allclose(tokens.var(axis=1), 1, atol=1e-3)  # var / (var + eps)


def test_more_padding_changes_only_unmasked_batchnorm(padding):
    assert 1 - padding["mask"].mean() == pytest.approx(0.47, abs=0.005)   # 47% padding
    change = padding["pad_change"]
    assert change["BatchNorm, padding included"] == pytest.approx(1.1, abs=0.05)  # "up to 1.1"
    assert change["masked BatchNorm"] < 1e-12
    assert change["LayerNorm (no mask)"] < 1e-12
    running = padding["polluted"].running_mean
    assert np.all(np.abs(running - 2.0) > 0.7)              # the real tokens' mean is 2


@pytest.fixture(scope="module")
def half():
    return run_section("rmsnorm", "9. float16")


def test_naive_float16_norms_return_zeros_or_nan(half):
    assert np.all(half["half_rms_big"] == 0)               # x**2 overflowed: x / inf
    assert np.all(half["half_ln_big"] == 0)
    assert np.all(np.isnan(half["half_ln_offset"]))         # inf - inf
    big = half["big"]
    with np.errstate(over="ignore"):
        assert np.abs(big).max() > 256 and np.isinf(big * big).any()


def test_computing_in_float32_fixes_it(half):
    assert 3e-4 < half["recipe_error"] < 6e-4               # float16's own rounding: "5e-4"
    assert half["fixed"].dtype == np.float16


def test_normcores_norms_are_right_on_float16_input(half):
    errors = half["normcore_half_error"]
    assert set(errors) >= {"LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm"}
    assert max(errors.values()) < 2e-3


def test_float16_batchnorm_buffers_overflow_and_float64_ones_do_not(half):
    assert np.all(np.isinf(half["half_bn"].running_var))
    assert np.all(half["half_bn"](half["wide"]) == 0)       # evaluation: beta, i.e. zeros
    assert np.all(np.isfinite(half["float_bn"].running_var))
    assert np.abs(half["float_bn"](half["wide"])).max() < 5


def test_pytorch_float16_batchnorm_buffers_overflow_too(half):
    torch = pytest.importorskip("torch", reason="PyTorch is the optional oracle")
    bn = torch.nn.BatchNorm1d(8, momentum=None).half()
    wide = torch.from_numpy(half["wide"])
    with torch.no_grad():
        bn(wide)
        assert torch.isinf(bn.running_var).all()
        assert (bn.eval()(wide) == 0).all()


@pytest.fixture(scope="module")
def dyt():
    return run_section("modern_norms", "1. DyT")


def test_layernorm_squashes_extreme_values_below_its_bound(dyt):
    assert np.all(np.diff(dyt["ln_median"]) > 0)           # the output grows with the input...
    assert np.all(np.diff(dyt["ln_ratio"]) < 0)            # ...ever more slowly
    assert dyt["ln_ratio"][-1] < 0.25 * dyt["ln_ratio"][1]
    assert dyt["out_size"].max() <= np.sqrt(15)


def test_each_dyt_mistake_breaks_its_own_gradients_and_is_named(dyt):
    errors = dyt["dyt_errors"]
    assert max(errors[None].values()) < 1e-7
    wrong = {mistake: {name for name, e in errs.items() if e > 1e-3} for mistake, errs in errors.items()}
    assert wrong == {None: set(), "dalpha averaged": {"alpha"}, "tanh' from x": {"x", "alpha"},
                     "no alpha in dx": {"x"}}


def test_dyt_mistakes_give_the_numbers_the_notebook_says(dyt):
    dx_right, dalpha_right = dyt["dx_right"], dyt["dalpha_right"]
    dalpha_mean = dyt["gradients"]("dalpha averaged")[1]
    assert dalpha_right / dalpha_mean == pytest.approx(dyt["batch"].size)       # 24 values
    assert dyt["per_channel"].sum() == pytest.approx(dalpha_right.item())
    np.testing.assert_allclose(dyt["gradients"]("no alpha in dx")[0] / dx_right, 1 / dyt["alpha_"])
    assert 1e-13 < dyt["dx_saturated"] < 3e-13                                  # the question's number


@pytest.fixture(scope="module")
def qk():
    return run_section("modern_norms", "2. QK-norm")


def test_qk_norm_bounds_the_logits_and_without_it_they_grow_as_c_squared(qk):
    logits, bound = qk["logits"], qk["bound"]
    assert logits[64, None] / logits[1, None] == pytest.approx(64 ** 2, rel=1e-6)
    assert all(logits[c, "rmsnorm"] <= bound for c in (1, 4, 16, 64))
    assert logits[64, "rmsnorm"] == pytest.approx(logits[1, "rmsnorm"], rel=1e-9)


def test_qk_norm_mistakes(qk):
    np.testing.assert_allclose(qk["rms"](qk["per_head"]), 1, atol=1e-9)
    whole = qk["rms"](qk["whole"])
    assert whole[0] > 1.3 and whole[1] < 0.2                 # head 0 takes the budget
    np.testing.assert_allclose(qk["after"] / qk["right"], np.sqrt(qk["D"]), rtol=1e-9)
    assert qk["skipped_error"] > 0.3
    assert np.abs(qk["dx_hand"] - qk["dx_layer"]).max() < 1e-12


@pytest.fixture(scope="module")
def peri():
    return run_section("modern_norms", "3. Peri-LN")


def test_peri_ln_caps_what_a_branch_adds_but_is_not_smaller_at_initialisation(peri):
    growth = peri["growth"]
    for c in (3, 10):
        assert 0.5 * c ** 2 < growth["pre", c] < 2 * c ** 2
        assert 0.8 < growth["peri", c] < 1.2
    np.testing.assert_allclose(peri["added"], 1, atol=1e-9)   # RMSNorm, gamma 1: exactly RMS 1
    assert peri["stream"]["peri", 1][-1] > peri["stream"]["pre", 1][-1]
    assert peri["pre_added_rms"] < 1


def test_peri_out_norm_divides_a_grown_branchs_gradient(peri):
    first, second = peri["grads_out"]
    np.testing.assert_allclose(first / second, 100, rtol=1e-9)


@pytest.fixture(scope="module")
def folding():
    return run_section("batchnorm_in_practice", "1. Folding")


def test_the_fold_is_exact_and_layernorm_rmsnorm_are_not_affine(folding):
    assert folding["fold_vs_hand"] < 1e-12 and folding["fold_vs_pair"] < 1e-12
    assert folding["fold_after_error"] < 1e-12                    # the question: into the next Linear
    assert folding["ln_scale"]["Ana"] > 1.5 * folding["ln_scale"]["Dina"]
    gaps = folding["midpoint_gap"]
    assert gaps["BatchNorm (eval)"] < 1e-12
    assert gaps["LayerNorm"] > 0.5 and gaps["RMSNorm"] > 1e-3     # "over ten trillion times rounding"


def test_the_affine_of_layernorm_rmsnorm_folds_and_the_centring_is_absorbed(folding):
    assert folding["affine_vs_hand"] < 1e-12 and folding["affine_vs_pair"] < 1e-12
    assert folding["rms_vs_pair"] < 1e-12
    assert folding["ln_vs_rms"] < 1e-12                           # LayerNorm = RMSNorm of the centred stream
    assert folding["rms_uncentred"] > 0.1                         # and not without the centring


@pytest.fixture(scope="module")
def running_stats():
    return run_section("batchnorm_in_practice", "2. Running statistics")


def test_recalibration_gives_the_statistics_of_the_concatenated_batches(running_stats):
    r = running_stats
    assert r["recal_error"] < 1e-12
    assert r["gap_before"] / r["gap_after"] > 50                  # "ninety-fold"
    assert r["gap_biased"] < 1e-12 < r["gap_one_batch"] < r["gap_after"]


def test_momentum_none_averages_per_batch(running_stats):
    assert running_stats["cumulative_is_per_batch"] < 1e-12
    assert 0.3 < running_stats["per_batch_vs_pooled"] < 0.6       # "up to 43%"


def test_frozen_batchnorm_keeps_its_statistics_through_train(running_stats):
    r = running_stats
    assert r["stats_unchanged"] and not any(r["frozen_flags"])
    assert np.abs(r["frozen"][0].gamma.grad).max() > 0.1
    assert all(b.training for b in r["frozen"])                  # unfrozen at the end of the cell


@pytest.fixture(scope="module")
def sync():
    return run_section("batchnorm_in_practice", "3. SyncBatchNorm")


def test_sync_batchnorm_written_out_and_the_layer_equal_batchnorm(sync):
    assert sync["hand_error"] < 1e-12 and sync["sync_error"] < 1e-12
    assert [len(s) for s in sync["shards"]] == [2, 1, 5, 0]


def test_both_protocols_written_out_and_counted(sync):
    """The gather protocol (torch's) written out and the layer's two protocols equal BatchNorm1d;
    the messages as the cost table counts them, C = 3 on K = 4 workers."""
    assert sync["gather_error"] < 1e-12
    assert sync["protocol_gap"] < 1e-12 and sync["batchnorm_gap"] < 1e-12
    agreement = ("all_reduce", 36, 36)  # 9 values in each of the 4 workers' slots
    assert sync["counted"]["allreduce"] == [agreement, ("all_reduce", 4, 4), ("all_reduce", 3, 3), ("all_reduce", 6, 6)]
    assert sync["counted"]["gather"] == [agreement, ("all_gather", 7, 28), ("all_reduce", 6, 6)]


def test_averaged_variances_lose_the_spread_of_the_means(sync):
    assert sync["split_error"] < 1e-12
    np.testing.assert_allclose(sync["between"], [1.5625, 56.25, 100.0])


def test_one_round_variance_loses_digits(sync):
    digits = sync["digits"]
    assert 7 < digits[1e4]["one round of sums"] < 10 and digits[1e4]["two rounds of sums"] > 14
    assert digits[1e8]["one round of sums"] < 1 and digits[1e8]["two rounds of sums"] > 14
    gathered = "gathered, within + between"
    assert digits[1e4][gathered] > 13 and 9 < digits[1e8][gathered] < 12   # the text's 13 and 9
    assert 0.2 < sync["skipped_error"] < 0.4                      # the question's "0.3 here"


@pytest.fixture(scope="module")
def scale():
    return run_section("batchnorm_in_practice", "4. Scale invariance")


def test_a_weight_before_batchnorm_is_scale_invariant(scale):
    for change, ratio in scale["invariance"].values():
        assert change < 1e-5 and abs(ratio - 1) < 1e-4


def test_sgd_grows_the_norm_and_decay_balances_it(scale):
    norms_plain, _, _ = scale["runs"][0.0]
    norms_decay, _, rel_decay = scale["runs"][0.05]
    assert np.all(np.diff(norms_plain) > 0) and scale["growth_error"] < 1e-3
    assert norms_decay[-1] < 0.5 * norms_decay[0]
    assert (norms_plain[0] / norms_decay[-1]) ** 2 > 5            # lr / ||W||^2 several-fold higher
    assert rel_decay[-100:].mean() == pytest.approx(np.sqrt(2 * 0.1 * 0.05), rel=0.1)


@pytest.fixture(scope="module")
def placement():
    return run_section("batchnorm_in_practice", "5. Before or after")


def test_a_bias_before_batchnorm_has_a_zero_gradient(placement):
    before, after = placement["bias_grad"]["before the ReLU"], placement["bias_grad"]["after the ReLU"]
    assert before[0] < 1e-12 and before[1] > 0.1
    assert after[0] > 1e-3
    assert placement["shifted"]["before the ReLU"] < 1e-12 < placement["shifted"]["after the ReLU"]
