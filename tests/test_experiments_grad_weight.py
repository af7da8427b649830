"""grad_weight: WeightNorm's v and a weight before BatchNorm are orthogonal to their gradients, so
plain SGD grows their norm by lr^2 ||g||^2 a step and lowers lr / ||w||^2; a weight no norm
follows is not."""

import numpy as np
import pytest

from normcore.experiments import grad_weight

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return grad_weight.run(quick=True)


def test_the_gradient_is_orthogonal_to_the_weight_with_a_norm_and_not_without(result):
    assert np.abs(result["weightnorm/cosine"]).max() < 1e-12      # a projection: exact up to rounding
    assert np.abs(result["batchnorm/cosine"]).max() < 1e-5        # up to BatchNorm's eps
    assert np.median(np.abs(result["plain/cosine"])) > 1e-2


@pytest.mark.parametrize("kind, tolerance", [("weightnorm", 1e-8), ("batchnorm", 1e-3)])
def test_each_sgd_step_grows_the_squared_norm_by_lr2_grad2(result, kind, tolerance):
    growth, predicted = result[f"{kind}/growth"], result[f"{kind}/pythagoras"]
    assert np.all(growth > 0)
    assert np.median(np.abs(growth / predicted - 1)) < tolerance
    effective = result[f"{kind}/effective_lr"][0]
    assert np.all(np.diff(effective) < 0)                          # the effective learning rate only falls


def test_without_a_norm_the_pythagoras_step_fails(result):
    growth, predicted = result["plain/growth"], result["plain/pythagoras"]
    assert np.any(growth < 0)
    assert np.median(np.abs(growth / predicted - 1)) > 1


def test_plot_writes_a_png(result, tmp_path):
    paths = grad_weight.plot(result, tmp_path)
    assert [p.name for p in paths] == ["grad_weight.png"] and paths[0].stat().st_size > 10_000
