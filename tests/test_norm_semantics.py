"""Forward semantics without PyTorch: formulas, running statistics, modes, dtypes, NaN."""

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import randomize_parameters


def test_layernorm_forward_is_the_formula():
    rng = np.random.default_rng(0)
    ln = randomize_parameters(nc.LayerNorm(5), rng)
    x = rng.standard_normal((3, 5)) * 4 + 2
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)  # biased
    expected = (x - mean) / np.sqrt(var + 1e-5) * ln.gamma.data + ln.beta.data
    np.testing.assert_allclose(ln(x), expected, rtol=1e-12, atol=1e-12)


def test_rmsnorm_forward_is_the_formula_and_eps_none_is_machine_epsilon():
    rng = np.random.default_rng(1)
    rms = randomize_parameters(nc.RMSNorm(4), rng)
    x = rng.standard_normal((3, 4)) * 1e-8  # tiny rows make eps visible
    for dtype in (np.float64, np.float32):
        eps = np.finfo(dtype).eps
        xd = x.astype(dtype)
        expected = xd / np.sqrt((xd.astype(np.float64) ** 2).mean(-1, keepdims=True) + eps) * rms.gamma.data
        np.testing.assert_allclose(rms(xd), expected, rtol=1e-5 if dtype == np.float32 else 1e-12)
    # float16 is computed in float32, so it uses float32's epsilon
    x16 = np.full((1, 4), 1e-3, dtype=np.float16)
    ref = x16.astype(np.float32) / np.sqrt(np.float32(x16.astype(np.float32)[0, 0] ** 2) + np.finfo(np.float32).eps)
    np.testing.assert_allclose(rms(x16), (ref * rms.gamma.data).astype(np.float16), rtol=1e-3)


def test_constant_layernorm_row_gives_bias_and_finite_gradient():
    rng = np.random.default_rng(2)
    ln = randomize_parameters(nc.LayerNorm(4), rng)
    x = np.full((1, 4), 3.0)
    np.testing.assert_allclose(ln(x), ln.beta.data[None])
    dy = rng.standard_normal((1, 4))
    gy = dy * ln.gamma.data
    np.testing.assert_allclose(ln.backward(dy), (gy - gy.mean()) / np.sqrt(1e-5), rtol=1e-12)


def batches(rng, n=4, shape=(8, 3)):
    return [rng.standard_normal(shape) * (i + 1) + i for i in range(n)]


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
def test_batchnorm_running_statistics(momentum):
    rng = np.random.default_rng(3)
    bn = nc.BatchNorm1d(3, momentum=momentum)
    rm, rv = np.zeros(3), np.ones(3)
    xs = batches(rng)
    for k, x in enumerate(xs, start=1):
        bn(x)
        m = 1 / k if momentum is None else momentum
        rm = (1 - m) * rm + m * x.mean(0)
        rv = (1 - m) * rv + m * x.var(0, ddof=1)  # unbiased in the running update
        np.testing.assert_allclose(bn.running_mean, rm, rtol=1e-12)
        np.testing.assert_allclose(bn.running_var, rv, rtol=1e-12)
        assert int(bn.num_batches_tracked) == k
    if momentum is None:  # the plain average of the batch statistics
        np.testing.assert_allclose(bn.running_mean, np.mean([x.mean(0) for x in xs], 0), rtol=1e-12)


def test_batchnorm_eval_uses_running_statistics_and_leaves_them_alone():
    rng = np.random.default_rng(4)
    bn = randomize_parameters(nc.BatchNorm2d(2), rng)
    for x in batches(rng, shape=(4, 2, 3, 3)):
        bn(x)
    state = bn.state_dict()
    bn.eval()
    x = rng.standard_normal((1, 2, 3, 3))  # a single sample is fine in eval
    view = (1, 2, 1, 1)
    expected = ((x - bn.running_mean.reshape(view)) / np.sqrt(bn.running_var.reshape(view) + 1e-5)
                * bn.gamma.data.reshape(view) + bn.beta.data.reshape(view))
    np.testing.assert_allclose(bn(x), expected, rtol=1e-12)
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v, state[k])
    dy = rng.standard_normal(x.shape)
    np.testing.assert_allclose(bn.backward(dy), dy * bn.gamma.data.reshape(view)
                               / np.sqrt(bn.running_var.reshape(view) + 1e-5), rtol=1e-12)


def test_batchnorm_without_running_stats_uses_batch_statistics_in_eval():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 3)) * 5 + 2
    train_y = nc.BatchNorm1d(3, track_running_stats=False)(x)
    eval_bn = nc.BatchNorm1d(3, track_running_stats=False).eval()
    np.testing.assert_allclose(eval_bn(x), train_y)
    np.testing.assert_allclose(eval_bn(x).mean(0), 0, atol=1e-12)
    assert eval_bn.running_mean is None and "running_mean" not in eval_bn.state_dict()


def test_groupnorm_with_one_group_per_channel_is_instancenorm_and_one_group_is_layernorm():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((2, 4, 3, 3))
    np.testing.assert_allclose(nc.GroupNorm(4, 4)(x), nc.InstanceNorm2d(4)(x), rtol=1e-12)
    np.testing.assert_allclose(nc.GroupNorm(1, 4)(x), nc.LayerNorm((4, 3, 3))(x), rtol=1e-12)


def test_instancenorm_accepts_unbatched_input():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5))
    inorm = nc.InstanceNorm1d(3, affine=True)
    y = inorm(x)
    np.testing.assert_allclose(y, nc.InstanceNorm1d(3, affine=True)(x[None])[0])
    assert inorm.backward(np.ones_like(y)).shape == (3, 5)


def test_dropout_is_inverted_and_uses_its_mask_in_backward():
    rng = np.random.default_rng(8)
    drop = nc.Dropout(0.25, rng=0)
    x = rng.standard_normal((200, 50))
    y = drop(x)
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02
    dy = rng.standard_normal(x.shape)
    np.testing.assert_allclose(drop.backward(dy), dy * kept / 0.75)
    # The expectation is kept: average many masks of a constant input.
    ones = np.ones((2000, 100))
    assert abs(drop(ones).mean() - 1) < 0.01
    drop.eval()
    assert drop(x) is x or np.array_equal(drop(x), x)
    np.testing.assert_array_equal(drop.backward(dy), dy)


def test_dropout_p_zero_and_one_and_seeding():
    x = np.random.default_rng(0).standard_normal((4, 4))
    np.testing.assert_array_equal(nc.Dropout(0.0)(x), x)
    d1 = nc.Dropout(1.0)
    assert not d1(x).any() and not d1.backward(np.ones_like(x)).any()
    np.testing.assert_array_equal(nc.Dropout(0.5, rng=3)(x), nc.Dropout(0.5, rng=3)(x))
    g = np.random.default_rng(3)
    np.testing.assert_array_equal(nc.Dropout(0.5, rng=g)(x), nc.Dropout(0.5, rng=3)(x))


# --- dtypes --------------------------------------------------------------------------------
LAYERS = [
    lambda dt: nc.LayerNorm(4, dtype=dt),
    lambda dt: nc.RMSNorm(4, dtype=dt),
    lambda dt: nc.BatchNorm1d(3, dtype=dt),
    lambda dt: nc.GroupNorm(1, 3, dtype=dt),
]


def input_for(layer, rng):
    return rng.standard_normal((5, 3, 4))


@pytest.mark.parametrize("make", LAYERS)
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_output_and_input_gradient_have_the_input_dtype(make, dtype):
    rng = np.random.default_rng(9)
    layer = randomize_parameters(make(np.float64), rng)
    x64 = input_for(layer, rng)
    x = x64.astype(dtype)
    y = layer(x)
    assert y.dtype == dtype
    dx = layer.backward(np.ones_like(y))
    assert dx.dtype == dtype
    assert layer.gamma.grad.dtype == np.float64  # the parameter's own dtype
    ref = randomize_parameters(make(np.float64), np.random.default_rng(9))
    tol = {np.float16: 5e-3, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(y.astype(np.float64), ref(x.astype(np.float64)), atol=tol * 10, rtol=tol)


def test_float16_is_computed_in_float32():
    # Values whose squares overflow float16 (max 65504) still normalise correctly.
    x = np.array([[300.0, -300.0, 100.0, 0.0]], dtype=np.float16)
    for layer in (nc.LayerNorm(4), nc.RMSNorm(4)):
        y = layer(x)
        assert y.dtype == np.float16 and np.isfinite(y).all()
        np.testing.assert_allclose(y, layer.__class__(4)(x.astype(np.float64)), rtol=2e-3, atol=2e-3)


def test_float32_layer_parameters_and_gradients():
    layer = nc.LayerNorm(4, dtype=np.float32)
    assert layer.gamma.data.dtype == np.float32 and layer.gamma.grad.dtype == np.float32
    y = layer(np.ones((2, 4)))  # float64 input with float32 parameters: float64 output
    assert y.dtype == np.float64
    layer.backward(np.ones((2, 4)))
    assert layer.gamma.grad.dtype == np.float32


# --- NaN and inf propagate as in PyTorch ---------------------------------------------------
def test_nan_poisons_a_batchnorm_channel_and_a_layernorm_row_only():
    x = np.random.default_rng(10).standard_normal((4, 3))
    x[1, 2] = np.nan
    bn = nc.BatchNorm1d(3)
    y = bn(x)
    assert np.isnan(y[:, 2]).all() and np.isfinite(y[:, :2]).all()
    assert np.isnan(bn.running_mean[2]) and np.isfinite(bn.running_mean[:2]).all()
    for layer in (nc.LayerNorm(3), nc.RMSNorm(3)):
        y = layer(x)
        assert np.isnan(y[1]).all() and np.isfinite(np.delete(y, 1, axis=0)).all()
