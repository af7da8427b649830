"""Internal covariate shift (Ioffe & Szegedy 2015, Fig. 1): BatchNorm does not stop what a
sigmoid sees from drifting, it removes most of the jitter; it learns faster and tolerates a
higher learning rate."""

import numpy as np
import pytest

from normcore.experiments import covariate_shift

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return covariate_shift.run(quick=True)


def test_batchnorm_does_not_stop_the_drift(result):
    # with BatchNorm the percentiles still end up a sizeable fraction of the width away,
    # several times further than they move between two checkpoints
    net, jitter = result["batchnorm/net_drift"], result["batchnorm/jitter"]
    assert net.min() > 0.1, f"BatchNorm's net drift {net} widths"
    assert net.min() > 2.5 * jitter.max(), f"net drift {net} against jitter {jitter}"


def test_batchnorm_removes_most_of_the_jitter(result):
    assert result["none/jitter"].min() > 2 * result["batchnorm/jitter"].max()


def test_batchnorm_learns_faster(result):
    steps = result["steps"]
    early = steps <= steps[-1] // 3
    assert result["batchnorm/accuracy"][:, early].mean() > result["none/accuracy"][:, early].mean() + 0.15
    assert result["batchnorm/accuracy"][:, -1].min() > 0.6


def test_batchnorm_still_learns_at_a_learning_rate_where_the_plain_network_fails(result):
    lrs = list(result["lrs"])
    high = lrs.index(16.0)
    assert result["none/lr_accuracy"][high] < 0.3  # near chance (10 classes)
    assert result["batchnorm/lr_accuracy"][high] > 0.5
    assert result["none/lr_accuracy"][lrs.index(1.0)] > 0.45  # it does learn at a modest rate


def test_drift_and_jitter_are_measured_in_units_of_width():
    still = np.tile(np.array([[-1.0], [0.0], [1.0]]), (20, 1, 4))  # (K, 3, units), not moving
    assert covariate_shift.net_drift(still) == covariate_shift.jitter(still) == 0
    moving = still + np.arange(20)[:, None, None] * 0.5  # shifts by a quarter width per checkpoint
    assert covariate_shift.jitter(moving) == pytest.approx(0.25)
    assert covariate_shift.net_drift(moving) == pytest.approx(18 * 0.25)  # mean of 2 last - 2 first
    shaking = still + 0.5 * (-1.0) ** np.arange(20)[:, None, None]  # jumps back and forth, goes nowhere
    assert covariate_shift.net_drift(shaking) == 0
    assert covariate_shift.jitter(shaking) == pytest.approx(0.5)


def test_plot_writes_pngs(result, tmp_path):
    paths = covariate_shift.plot(result, tmp_path)
    assert len(paths) == 2 and all(p.stat().st_size > 10_000 for p in paths)
