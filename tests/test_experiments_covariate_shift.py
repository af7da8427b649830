"""Internal covariate shift (Ioffe & Szegedy 2015, Fig. 1): BatchNorm stabilises what a sigmoid
sees, learns faster, and tolerates a higher learning rate."""

import numpy as np
import pytest

from normcore.experiments import covariate_shift


@pytest.fixture(scope="module")
def result():
    return covariate_shift.run(quick=True)


def test_batchnorm_keeps_the_sigmoid_input_distribution_stable(result):
    # both seeds: without BN the distribution moves several times more, relative to its width
    assert result["none/drift"].min() > 2.5 * result["batchnorm/drift"].max()


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


def test_relative_drift_measures_movement_in_units_of_width():
    still = np.tile(np.array([[-1.0], [0.0], [1.0]]), (10, 1, 4))  # (K, 3, units), not moving
    assert covariate_shift.relative_drift(still) == 0
    moving = still + np.arange(10)[:, None, None] * 0.5  # shifts by a quarter width per checkpoint
    assert covariate_shift.relative_drift(moving) == pytest.approx(0.25)


def test_plot_writes_pngs(result, tmp_path):
    paths = covariate_shift.plot(result, tmp_path)
    assert len(paths) == 2 and all(p.stat().st_size > 10_000 for p in paths)
