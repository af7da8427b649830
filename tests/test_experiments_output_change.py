"""Output change under a small random weight change: Post-LN's grows about linearly with depth,
Pre-LN's about logarithmically."""

import numpy as np
import pytest

from normcore.experiments import output_change as exp

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module", params=[0, 1])
def result(request):
    return exp.run(quick=True, seed=request.param)


def _growth(result, position):
    """typical change at the largest depth over that at L = 1."""
    typical = result["typical"][list(result["positions"]).index(position)]
    return typical[-1] / typical[0]


def test_post_ln_change_grows_about_linearly(result):
    depth_ratio = result["depths"][-1] / result["depths"][0]
    assert _growth(result, "post") > 0.25 * depth_ratio
    assert result["post_linear_r2"] > 0.8


def test_pre_ln_change_grows_about_logarithmically(result):
    assert _growth(result, "pre") < 5
    assert result["pre_log_r2"] > 0.75
    assert result["pre_log_r2"] > result["pre_linear_r2"], "ln L should fit Pre-LN better than a line"
    assert _growth(result, "post") > 2 * _growth(result, "pre")


def test_change_is_in_the_linear_regime():
    # halving the step divides the normalised change by about 1 (it is divided by sigma**2)
    a = exp.output_change("post", 4, seed=0, sigma=1e-3)
    b = exp.output_change("post", 4, seed=0, sigma=5e-4)
    np.testing.assert_allclose(a, b, rtol=0.05)


def test_plot_writes_a_png(result, tmp_path):
    paths = exp.plot(result, tmp_path)
    assert [p.name for p in paths] == ["output_change.png"]
    assert paths[0].stat().st_size > 10_000
