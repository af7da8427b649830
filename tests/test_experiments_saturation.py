"""Saturation: large weights saturate a deep tanh MLP; a norm before the activation prevents it."""

import numpy as np
import pytest

from normcore import BatchNorm1d, LayerNorm
from normcore.experiments import saturation

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return saturation.run(quick=True)


def test_without_a_norm_most_units_saturate_and_gradients_explode_toward_the_input(result):
    assert result["none/saturated"][1:].mean() > 0.5
    g = result["none/grad_norm"]  # Linear layers, input side first
    assert g[0] / g[-1] > 1000, "the first layer's gradient should dwarf the last one's"
    growth = g[:-1] / g[1:]  # going one layer down
    assert np.all(growth > 1.3), f"the gradient should grow at every layer toward the input: {growth}"


def test_the_growth_per_layer_is_the_weights_scale_times_the_tanh_slopes(result):
    # going down one layer multiplies the gradient's norm by about sqrt(width) * rms(tanh'(z))
    growth = result["none/grad_norm"][1:-2] / result["none/grad_norm"][2:-1]  # the inner layers
    gain = result["none/gain"][1:-1]
    np.testing.assert_allclose(np.median(growth), np.median(gain), rtol=0.15)
    assert np.median(gain) > 2  # above 1 although most units are saturated: they explode


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


def test_the_histograms_draw_every_layer_in_a_dark_palette_colour_with_its_own_line_style():
    from matplotlib.colors import to_rgb

    from normcore.experiments import _plot

    assert set(saturation.LAYER_COLORS) <= set(_plot.OKABE_ITO.values())
    assert len(set(saturation.LAYER_COLORS)) == len(saturation.LAYER_STYLES) == len(set(saturation.LAYER_STYLES))
    # visible on white: no colour as light as the palette's yellow (relative luminance below 0.5)
    assert all(np.dot(to_rgb(c), (0.2126, 0.7152, 0.0722)) < 0.5 for c in saturation.LAYER_COLORS)
