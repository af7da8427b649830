"""Effective depth: Post-Norm's input weight halves every two layers; Pre-Norm's stream grows
like sqrt(l) and consecutive layers' inputs become parallel."""

import numpy as np
import pytest

from normcore.experiments import effective_depth

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return effective_depth.run(quick=True)


def test_post_norm_input_weight_decays_like_two_to_minus_half_l(result):
    layer, weight = result["layer"][:11], result["post_weight"][:11]  # before the noise floor
    slope = np.polyfit(layer, np.log2(weight), 1)[0]
    assert -0.6 < slope < -0.4, f"log2(weight of x_0) falls by {slope:.3f} per layer, expected about -1/2"
    np.testing.assert_allclose(weight, 2.0 ** (-layer / 2), rtol=0.25)


def test_pre_norm_keeps_the_input_with_weight_one(result):
    np.testing.assert_allclose(result["pre_weight"], 1.0, atol=0.1)


def test_pre_norm_consecutive_inputs_become_parallel(result):
    cosine = result["pre_cosine"]
    assert np.all(np.diff(cosine) > -0.01), f"Pre-Norm cosines should rise with depth: {cosine}"
    assert cosine[-1] > 0.95
    np.testing.assert_allclose(cosine, result["theory_pre_cosine"], atol=0.02)
    # Post-Norm rewrites the stream at every layer: the cosine stays at 1/sqrt(2)
    np.testing.assert_allclose(result["post_cosine"], 2 ** -0.5, atol=0.05)


def test_pre_norm_stream_grows_like_sqrt_depth_and_post_norm_stays_at_one(result):
    np.testing.assert_allclose(result["pre_rms"], result["theory_pre_rms"], rtol=0.1)
    assert result["pre_rms"][-1] > 3 * result["pre_rms"][0]
    np.testing.assert_allclose(result["post_rms"], 1.0, atol=0.01)


def test_plot_writes_a_png(result, tmp_path):
    paths = effective_depth.plot(result, tmp_path)
    assert [p.name for p in paths] == ["effective_depth.png"]
    assert paths[0].stat().st_size > 10_000
