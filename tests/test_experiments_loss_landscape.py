"""The loss landscape (Santurkar et al. 2018, Fig. 4): along the gradient, BatchNorm's loss and
gradient change less than the plain network's, at the same learning rate."""

import numpy as np
import pytest

from normcore.experiments import loss_landscape

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return loss_landscape.run(quick=True)


def test_the_gradient_changes_several_times_less_with_batchnorm(result):
    assert result["none/median_grad_change"].min() > 2 * result["batchnorm/median_grad_change"].max()


def test_the_loss_varies_less_with_batchnorm(result):
    assert result["none/median_loss_variation"].min() > 1.2 * result["batchnorm/median_loss_variation"].max()


def test_the_gradients_are_of_similar_size(result):
    # the smaller changes are not explained by a much shorter gradient, hence shorter steps
    ratio = result["batchnorm/median_grad_norm"] / result["none/median_grad_norm"]
    assert np.all((0.6 < ratio) & (ratio < 1.4))


def test_probing_leaves_the_model_as_it_was():
    from normcore import BatchNorm1d
    from normcore.experiments._nn import mlp, teacher_task

    x, y = teacher_task(64, rng=0)
    model = mlp([20, 16, 16, 10], "relu", BatchNorm1d, rng=0)
    before = model.state_dict()
    loss_landscape.probe(model, x, y, lr=0.1)
    after = model.state_dict()
    assert all(np.array_equal(before[k], after[k]) for k in before)


def test_plot_writes_a_png(result, tmp_path):
    paths = loss_landscape.plot(result, tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
