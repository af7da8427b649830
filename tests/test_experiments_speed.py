"""Speed: timings exist (no timed assertions); RMSNorm makes fewer passes over the data than LayerNorm."""

import numpy as np
import pytest

from normcore import LayerNorm, RMSNorm
from normcore.experiments import speed


@pytest.fixture(scope="module")
def result():
    return speed.run(quick=True)


def test_every_timing_is_measured_and_positive(result):
    for name in speed.NORMS:
        t = result[f"{name}/seconds"]
        assert t.shape == result["sizes"].shape and np.all(np.isfinite(t)) and np.all(t > 0)


def test_rmsnorm_makes_a_third_fewer_passes_than_layernorm(result):
    # forward: LN mean, centre, square, mean, scale = 5; RMS square, mean, scale = 3
    # backward: LN 7, RMS 5 (no mean of the gradient, no centring term)
    assert result["layernorm/passes"] == 12
    assert result["rmsnorm/passes"] == 8
    assert result["batchnorm/passes"] == result["layernorm/passes"]  # the same arithmetic, other axes


def test_pass_counter_counts_full_size_operations_only():
    rng = np.random.default_rng(0)
    x, dy = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    assert speed.count_passes(LayerNorm(6), x, dy) > speed.count_passes(RMSNorm(6), x, dy) > 0


def test_plot_writes_a_png(result, tmp_path):
    paths = speed.plot(result, tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
