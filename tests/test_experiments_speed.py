"""Speed: timings exist (no timed assertions); RMSNorm makes fewer passes over the data than
LayerNorm, counted through the layers' public forward and backward."""

import numpy as np
import pytest

import normcore as nc
from normcore.experiments import speed

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return speed.run(quick=True)


def test_every_timing_is_measured_and_positive(result):
    for name in speed.NORMS:
        t = result[f"{name}/seconds"]
        assert t.shape == result["sizes"].shape and np.all(np.isfinite(t)) and np.all(t > 0)


def test_rmsnorm_makes_37_percent_fewer_passes_than_layernorm(result):
    # forward, LN: sum for the mean, x - mean and its square, sum for the variance, x - mean
    # again and * rstd, * gamma, + beta = 8; RMS: x**2, its sum, * rrms, * gamma = 4
    assert (result["layernorm/passes/forward"], result["rmsnorm/passes/forward"]) == (8, 4)
    # backward, LN: dy * x_hat and its sum (dgamma), sum of dy (dbeta), dx_hat = dy * gamma, the
    # mean of dx_hat, dx_hat * x_hat and its sum, three terms and * rstd = 11; RMS: no dbeta, no
    # mean of dx_hat and no subtracting it = 8
    assert (result["layernorm/passes/backward"], result["rmsnorm/passes/backward"]) == (11, 8)
    assert (result["layernorm/passes"], result["rmsnorm/passes"]) == (19, 12)
    assert round(100 * (1 - 12 / 19)) == 37 and "37% fewer passes" in speed.TAKEAWAY
    assert result["batchnorm/passes"] == result["layernorm/passes"]  # the same arithmetic, other axes


def test_pass_counter_counts_full_size_operations_only():
    counted = np.arange(12.0).reshape(3, 4).view(speed.PassCounter)
    speed.PassCounter.counter = {"full": 12, "passes": 0}
    try:
        row_sums = counted.sum(axis=1, keepdims=True)  # reads all 12 values: 1
        centred = counted - row_sums                   # 2
        scaled = row_sums * 2.0                        # 3 values: not a pass
        np.einsum("ij,ij->j", centred, counted)        # 3
        assert speed.PassCounter.counter["passes"] == 3
        assert isinstance(centred, speed.PassCounter) and isinstance(scaled, speed.PassCounter)
    finally:
        speed.PassCounter.counter = None


def test_counting_changes_no_number_and_goes_through_the_public_api_only():
    rng = np.random.default_rng(0)
    x, dy = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    plain, counted = nc.LayerNorm(6), nc.LayerNorm(6)
    speed.PassCounter.counter = {"full": x.size, "passes": 0}
    try:
        y = counted.forward(x.view(speed.PassCounter))
        dx = counted.backward(dy.view(speed.PassCounter))
    finally:
        speed.PassCounter.counter = None
    assert isinstance(y, speed.PassCounter), "the counter went through the layer's input check"
    np.testing.assert_array_equal(y, plain.forward(x))
    np.testing.assert_array_equal(dx, plain.backward(dy))
    np.testing.assert_array_equal(counted.weight.grad, plain.weight.grad)
    assert speed.count_passes(nc.LayerNorm(6), x, dy) > speed.count_passes(nc.RMSNorm(6), x, dy)


def test_other_array_subclasses_still_become_plain_arrays():
    x = np.ma.masked_array(np.random.default_rng(0).normal(size=(3, 4)), mask=False)
    y = nc.LayerNorm(4).forward(x)
    assert type(y) is np.ndarray


def test_plot_writes_a_png(result, tmp_path):
    paths = speed.plot(result, tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
