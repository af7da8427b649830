"""no_norm: without a norm a deep residual MLP's stream explodes at initialisation and it trains
badly; ReZero and LayerScale keep each block near the identity and train without any norm."""

import numpy as np
import pytest

from normcore.experiments import no_norm

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return no_norm.run(quick=True)


def row(result, key, variant):
    return result[key][list(result["variants"]).index(variant)]


def test_at_initialisation_only_the_plain_stack_explodes(result):
    deepest = list(result["depths"]).index(16)
    assert row(result, "growth", "plain")[deepest] > 100
    assert row(result, "growth", "pre_ln")[deepest] < 10
    assert row(result, "growth", "layerscale")[deepest] < 1.5
    assert np.all(row(result, "growth", "rezero") == 1.0)          # alpha = 0: every block is the identity


def test_rezero_and_layerscale_train_without_a_norm_and_the_plain_stack_does_not(result):
    chance = result["chance_loss"]
    for variant in ("rezero", "layerscale", "pre_ln"):
        assert np.all(row(result, "final_loss", variant) < chance - 1), variant
    plain = row(result, "final_loss", "plain")
    assert np.all(plain > row(result, "final_loss", "pre_ln") + 0.3), plain


def test_plot_writes_a_png(result, tmp_path):
    paths = no_norm.plot(result, tmp_path)
    assert [p.name for p in paths] == ["no_norm.png"] and paths[0].stat().st_size > 10_000
