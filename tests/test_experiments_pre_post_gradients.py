"""Gradients at initialisation: Post-LN's are larger toward the output on average, inside
overlapping bands, and its last block's does not shrink with depth; Pre-LN's last-layer gradient
shrinks with depth, more slowly than the bound's rate; DeepNorm's profile is flat."""

import numpy as np
import pytest

from normcore.experiments import pre_post_gradients as exp

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module", params=[0, 1])
def result(request):
    return exp.run(quick=True, seed=request.param)


def _rows(result):
    positions = list(result["positions"])
    return {p: i for i, p in enumerate(positions)}


def test_post_ln_gradients_grow_toward_the_output_and_pre_ln_do_not(result):
    row = _rows(result)
    ratio = result["top_to_bottom"]
    assert ratio[row["post"]] > 1.1, f"Post-LN's top blocks should get the larger gradients: {ratio}"
    assert ratio[row["pre"]] < 0.9, f"Pre-LN's top blocks should not get the larger gradients: {ratio}"
    assert ratio[row["post"]] > 1.5 * ratio[row["pre"]], f"top/bottom gradient ratios {ratio}"


def test_post_ln_rise_toward_the_output_sits_inside_overlapping_bands(result):
    runs = result["by_layer"][_rows(result)["post"]]  # (initialisations, blocks)
    first, last = np.percentile(runs[:, 0], [25, 75]), np.percentile(runs[:, -1], [25, 75])
    assert last[0] < first[1], f"interquartile ranges: first block {first}, last block {last}"
    # and single initialisations go either way
    assert np.any(runs[:, -1] < runs[:, 0]) and np.any(runs[:, -1] > runs[:, 0])


def test_post_ln_gradients_near_the_output_are_several_times_pre_ln(result):
    row, mean = _rows(result), result["by_layer_mean"]
    top = mean[:, -3:].mean(axis=1)
    assert top[row["post"]] > 2 * top[row["pre"]], f"top-block gradient norms {top}"


def test_last_block_gradient_shrinks_with_depth_for_pre_ln_only(result):
    row, last = _rows(result), result["last_block_mean"]
    slope = result["last_block_slope"]
    assert -0.45 < slope[row["pre"]] < -0.15, f"Pre-LN last-block gradient ~ L**{slope[row['pre']]:.2f}"
    assert last[row["pre"], -1] < 0.75 * last[row["pre"], 0]
    assert last[row["post"], -1] > last[row["post"], 0], "Post-LN's last-block gradient should not shrink"


def test_deepnorm_profile_is_flat(result):
    ratio = result["top_to_bottom"][_rows(result)["deepnorm"]]
    assert 0.9 < ratio < 1.2


def test_plot_writes_a_png(result, tmp_path):
    paths = exp.plot(result, tmp_path)
    assert [p.name for p in paths] == ["pre_post_gradients.png"]
    assert paths[0].stat().st_size > 10_000
