"""Gradients at initialisation: Post-LN's grow toward the output and its last block's grows with
depth, Pre-LN's last-layer gradient shrinks with depth, DeepNorm's profile is flat."""

import numpy as np
import pytest

from normcore.experiments import pre_post_gradients as exp


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


def test_post_ln_gradients_near_the_output_are_several_times_pre_ln(result):
    row, mean = _rows(result), result["by_layer_mean"]
    top = mean[:, -3:].mean(axis=1)
    assert top[row["post"]] > 2 * top[row["pre"]], f"top-block gradient norms {top}"


def test_last_block_gradient_shrinks_with_depth_for_pre_ln_only(result):
    row, last = _rows(result), result["last_block_mean"]
    slope = result["last_block_slope"]
    assert slope[row["pre"]] < -0.15, f"Pre-LN last-block gradient ~ L**{slope[row['pre']]:.2f}"
    assert last[row["pre"], -1] < 0.75 * last[row["pre"], 0]
    assert last[row["post"], -1] > last[row["post"], 0], "Post-LN's last-block gradient should not shrink"


def test_deepnorm_profile_is_flat(result):
    ratio = result["top_to_bottom"][_rows(result)["deepnorm"]]
    assert 0.9 < ratio < 1.2


def test_plot_writes_a_png(result, tmp_path):
    paths = exp.plot(result, tmp_path)
    assert [p.name for p in paths] == ["pre_post_gradients.png"]
    assert paths[0].stat().st_size > 10_000
