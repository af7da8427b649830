"""Saturation: large weights saturate a deep tanh MLP; a norm before the activation prevents it."""

import numpy as np
import pytest

from normcore import BatchNorm1d, LayerNorm
from normcore.experiments import saturation


@pytest.fixture(scope="module")
def result():
    return saturation.run(quick=True)


def test_without_a_norm_most_units_saturate_and_gradients_span_orders_of_magnitude(result):
    assert result["none/saturated"][1:].mean() > 0.5
    g = result["none/grad_norm"]
    assert g.max() / g.min() > 100


@pytest.mark.parametrize("norm", ["batchnorm", "layernorm"])
def test_a_norm_before_the_activation_keeps_units_unsaturated_and_gradients_even(result, norm):
    assert result[f"{norm}/saturated"].max() < 0.05
    np.testing.assert_allclose(result[f"{norm}/pre_std"], 1.0, atol=0.05)  # pre-activations ~ unit variance
    g = result[f"{norm}/grad_norm"]
    assert g.max() / g.min() < 3


@pytest.mark.parametrize("norm", [BatchNorm1d, LayerNorm])
def test_the_same_norm_after_the_activation_does_not_prevent_saturation(norm):
    moved = saturation.measure(norm, depth=6, width=64, batch=128, norm_after=True, rng=1)
    assert moved["saturated"][1:].mean() > 0.5


def test_plot_writes_pngs(result, tmp_path):
    paths = saturation.plot(result, tmp_path)
    assert len(paths) == 2 and all(p.suffix == ".png" and p.stat().st_size > 10_000 for p in paths)
