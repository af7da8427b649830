"""BatchNorm before or after the ReLU; the bias of a Linear right before a BatchNorm gets a zero
gradient (up to float64 rounding) and so keeps its initial value under plain SGD."""

import numpy as np
import pytest

from normcore import BatchNorm1d, Linear
from normcore.experiments import bn_placement

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes

BEFORE, AFTER = 0, 1


@pytest.fixture(scope="module")
def result():
    return bn_placement.run(quick=True, seed=0)


def test_the_bias_before_a_batchnorm_gets_a_gradient_at_rounding_level(result):
    bias, weight = result["bias_grad"], result["weight_grad"]  # (placements, seeds, steps)
    ratio = bias[BEFORE].max() / weight[BEFORE].min()
    assert ratio < 1e-12, f"the bias before BN should get no gradient: |db| / |dW| up to {ratio:.1e}"
    assert bias[AFTER].min() > 1e-3 * weight[BEFORE].max(), (
        f"a bias before a ReLU gets a real gradient: {bias[AFTER].min():.1e}")


def test_the_bias_before_a_batchnorm_keeps_its_initial_value(result):
    moved = result["bias_moved"]  # (placements, seeds, steps)
    assert moved[BEFORE].max() < 1e-12, f"the bias before BN moved by {moved[BEFORE].max():.1e}"
    assert moved[AFTER][:, -1].min() > 1e-2, f"the bias before ReLU should move: {moved[AFTER][:, -1]}"


@pytest.mark.parametrize("seed", [1, 2])
def test_the_zero_bias_gradient_holds_for_other_seeds_and_depths(seed):
    data = bn_placement._data(seed, 1000)
    history = bn_placement.train("before", 4, 0.5, 30, data, seed)
    assert history["bias_grad"].max() < 1e-12 * history["weight_grad"].min()
    assert history["bias_moved"].max() < 1e-12


def test_a_constant_added_before_a_batchnorm_does_not_change_its_output():
    rng = np.random.default_rng(0)
    linear, bn = Linear(5, 4, rng=rng), BatchNorm1d(4)
    x = rng.normal(size=(16, 5))
    y = bn(linear(x))
    linear.bias.data += rng.normal(size=4)
    assert np.max(np.abs(bn(linear(x)) - y)) < 1e-12


def test_both_placements_learn_and_reach_the_same_held_out_accuracy(result):
    lrs = list(result["lrs"])
    test = result["test_accuracy"][:, 0, lrs.index(0.1)]  # (placements, seeds)
    assert test.min() > 0.6, f"both placements should learn the task: {test}"
    gap = abs(np.median(test[AFTER]) - np.median(test[BEFORE]))
    assert gap < 0.03, f"held-out accuracy should not separate the placements: {test}"


def test_bn_after_the_relu_trains_faster_at_a_small_learning_rate(result):
    lrs = list(result["lrs"])
    final = result["final_loss"][:, 0, lrs.index(0.01)]  # (placements, seeds), paired by seed
    assert np.all(final[AFTER] < final[BEFORE] - 0.05), f"final training loss, before vs after: {final}"


def test_plot_writes_both_pngs(result, tmp_path):
    paths = bn_placement.plot(result, tmp_path)
    assert [p.name for p in paths] == ["bn_placement.png", "bn_placement_bias.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
