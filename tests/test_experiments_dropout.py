"""Dropout: inverted dropout keeps the expectation; without 1/(1-p) train and eval disagree."""

import numpy as np
import pytest

from normcore.experiments import dropout

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return dropout.run(quick=True)


def test_inverted_dropout_keeps_the_expectation(result):
    np.testing.assert_allclose(result["inverted/expectation_ratio"], 1.0, atol=0.02)


def test_without_the_scale_the_expectation_shrinks_to_1_minus_p(result):
    np.testing.assert_allclose(result["unscaled/expectation_ratio"], 1 - result["ps"], atol=0.02)


def test_without_the_scale_evaluation_outputs_are_too_large(result):
    p = result["train_ps"]
    unscaled, inverted = result["unscaled/eval_slope"], result["inverted/eval_slope"]
    # evaluated, the unscaled network's outputs are 1/(1-p) times the inverted one's
    np.testing.assert_allclose(unscaled / inverted, 1 / (1 - p), rtol=0.15)
    assert np.all(np.abs(inverted - 1) < 0.25)  # close to the targets (dropout shrinks a little)
    assert np.all(result["unscaled/eval_mse"] > 2 * result["inverted/eval_mse"])


def test_the_unscaled_layer_is_the_identity_in_evaluation():
    x = np.random.default_rng(0).normal(size=(4, 5))
    layer = dropout.UnscaledDropout(0.5, rng=0)
    np.testing.assert_array_equal(layer.eval()(x), x)
    y = layer.train()(x)
    assert set(np.unique(np.round(y / x, 12))) <= {0.0, 1.0}


def test_plot_writes_pngs(result, tmp_path):
    paths = dropout.plot(result, tmp_path)
    assert len(paths) == 2 and all(p.stat().st_size > 10_000 for p in paths)
