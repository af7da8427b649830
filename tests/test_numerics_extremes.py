"""The norms at the edges of the floating-point range: both tiers give the mathematical answer.

* float32 inputs of huge spread (std 1e20 .. 5e37): the fast tier's per-channel and per-row
  constants of the backward must not leave float32's range (rstd**2 ~ 1e-44 at 1e22 rounds to
  0 or to a subnormal; rstd / n at 1e36 is a subnormal with a few digits);
* float64 inputs near 1e200 (the squares overflow) and 1e-200 (they underflow, so eps decides);

each against the reference tier in float64 on the same values (the hand computation: no
float32 arithmetic in it), forward, input gradient and parameter gradients.
"""

import numpy as np
import pytest

import normcore as nc
import normcore.fast as fast
from norm_tiers import with_layout

F32_EPS = float(np.finfo(np.float32).eps)


def layer(tier, name, kwargs, dtype):
    """A layer with random gamma and beta (the same in every tier and dtype)."""
    m = getattr(tier, name)(**kwargs, dtype=dtype)
    rng = np.random.default_rng(len(name))
    for p in m.parameters():
        p.data[...] = rng.uniform(0.5, 1.5, p.shape)
    return m


def run(m, x, dy):
    """(y, dx, parameter gradients) of one forward and backward, all in float64."""
    y = m(x)
    dx = m.backward(dy)
    return y.astype(np.float64), dx.astype(np.float64), [p.grad.astype(np.float64) for p in m.parameters()]


def rel_err(actual, expected, scale=0.0):
    """max |actual - expected| / max(max |expected|, scale)."""
    assert np.all(np.isfinite(actual)), "not finite"
    return float(np.max(np.abs(actual - expected), initial=0.0)) / max(float(np.max(np.abs(expected), initial=0.0)),
                                                                       scale, 1e-300)


# --- float32, huge spread: the fast tier's constants ----------------------------------------------
CHANNELS = [("BatchNorm1d", dict(num_features=3), (64, 3)),
            ("BatchNorm1d", dict(num_features=3), (16, 3, 8)),
            ("BatchNorm2d", dict(num_features=3), (8, 3, 4, 4)),
            ("BatchNorm2d", dict(num_features=2), (4, 2, 8, 8))]


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # running_var: the variance is beyond float32
@pytest.mark.parametrize("scale", [1e22, 1e25, 1e30, 1e36, 5e37])
@pytest.mark.parametrize("name, kwargs, shape", CHANNELS, ids=[f"{c[0]}-{len(c[2])}d-L{c[2][-1]}" for c in CHANNELS])
def test_fast_batchnorm_float32_huge_spread(name, kwargs, shape, scale):
    """x = standard normal * scale in float32: dx was off by 23% at 1e25 (A = gamma * rstd**2 *
    dgamma / n underflowed to 0 in float32) and NaN at 5e37 (the pivot's float32 sums and
    dy * xc overflowed). Now within float32 rounding of the float64 computation."""
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * scale).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    exact = run(layer(nc, name, kwargs, np.float64), x.astype(np.float64), dy.astype(np.float64))
    got = run(layer(fast, name, kwargs, np.float32), x, dy)
    assert rel_err(got[0], exact[0]) < 20 * F32_EPS, "y"
    assert rel_err(got[1], exact[1]) < 20 * F32_EPS, "dx"
    for g, e in zip(got[2], exact[2]):
        assert rel_err(g, e) < 20 * F32_EPS, "parameter gradient"


def test_fast_batchnorm_float32_tiny_eps_does_not_overflow():
    """The other side: x ~ 1e-25 with eps = 1e-45 gives rstd ~ 1e25, and the old A (rstd**2)
    overflowed float32 to inf."""
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((64, 3)) * 1e-25).astype(np.float32)
    dy = rng.standard_normal((64, 3)).astype(np.float32)
    kwargs = dict(num_features=3, eps=1e-45)
    exact = run(layer(nc, "BatchNorm1d", kwargs, np.float64), x.astype(np.float64), dy.astype(np.float64))
    got = run(layer(fast, "BatchNorm1d", kwargs, np.float32), x, dy)
    assert rel_err(got[1], exact[1]) < 20 * F32_EPS


ROWS = [("LayerNorm", dict(normalized_shape=4096), (3, 4096)),
        ("RMSNorm", dict(normalized_shape=4096, eps=1e-6), (3, 4096)),
        ("GroupNorm", dict(num_groups=2, num_channels=4), (2, 4, 2048)),
        ("InstanceNorm1d", dict(num_features=2, affine=True), (2, 2, 4096))]


@pytest.mark.parametrize("scale", [1e20, 1e30, 2.5e37])
@pytest.mark.parametrize("name, kwargs, shape", ROWS, ids=[r[0] for r in ROWS])
def test_fast_row_norms_float32_huge_spread(name, kwargs, shape, scale):
    """rstd / n per row was formed in float32: at std 2.5e37 and n = 4096 it is ~1e-41, a
    subnormal with 4 digits, and dx lost them wherever dy follows x (dy = x / std + noise makes
    the x_hat term dominate). Now in float64, and dx is within float32 rounding."""
    rng = np.random.default_rng(2)
    z = rng.standard_normal(shape)
    x = (z * scale).astype(np.float32)
    dy = (z + 0.1 * rng.standard_normal(shape)).astype(np.float32)
    ref64 = layer(nc, name, kwargs, np.float64)
    exact = run(ref64, x.astype(np.float64), dy.astype(np.float64))
    rstd = float(np.max(ref64._cache[1]))
    got = run(layer(fast, name, kwargs, np.float32), x, dy)
    assert rel_err(got[0], exact[0]) < 20 * F32_EPS, "y"
    # dx is rstd times terms of the size of dy * gamma (up to 1.5 * 4): relative to those
    assert rel_err(got[1], exact[1], scale=rstd * float(np.max(np.abs(dy))) * 1.5) < 20 * F32_EPS, "dx"
    for g, e in zip(got[2], exact[2]):
        assert rel_err(g, e) < 200 * F32_EPS, "parameter gradient"


# --- float64 near 1e200 and 1e-200: both tiers ------------------------------------------------------
TIERS = [nc, fast]
LAYERS = [("LayerNorm", dict(normalized_shape=(3, 4)), (5, 3, 4)),
          ("RMSNorm", dict(normalized_shape=12), (5, 12)),
          ("BatchNorm1d", dict(num_features=3), (16, 3)),
          ("BatchNorm1d", dict(num_features=3), (6, 3, 5)),
          ("BatchNorm2d", dict(num_features=2), (4, 2, 3, 3)),
          ("GroupNorm", dict(num_groups=2, num_channels=4), (3, 4, 5)),
          ("InstanceNorm1d", dict(num_features=3, affine=True), (2, 3, 7)),
          ("InstanceNorm2d", dict(num_features=2, affine=True), (2, 2, 3, 4)),
          ("BatchNorm3d", dict(num_features=2, bias=False), (3, 2, 2, 3, 2)),
          ("InstanceNorm3d", dict(num_features=2, affine=True, bias=False), (2, 2, 2, 3, 2))]
LAYER_IDS = [f"{name}-{len(shape)}d" for name, _, shape in LAYERS]


@pytest.mark.filterwarnings("ignore:overflow encountered")  # running_var: the variance itself is beyond float64
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "sliced"])
@pytest.mark.parametrize("power", [520, 664, 900])  # 2**520 ~ 3e156 (squares overflow), 2**664 ~ 1e200, 2**900 ~ 8e270
@pytest.mark.parametrize("tier", TIERS, ids=["reference", "fast"])
@pytest.mark.parametrize("name, kwargs, shape", LAYERS, ids=LAYER_IDS)
def test_float64_values_whose_squares_overflow(name, kwargs, shape, tier, power, layout):
    """x = z * 2**power, exactly: x_hat is that of z (eps is 1e-405 of the variance), so y and
    the parameter gradients are those of z, and dx is z's divided by 2**power. The variance
    overflowed float64 and the layers returned beta (BatchNorm and LayerNorm), 0 (RMSNorm) or
    NaN, with a zero or NaN dx. The expected values come from z with eps = 1e-300 (negligible
    there too), in the reference tier."""
    rng = np.random.default_rng(power)
    z = rng.standard_normal(shape)
    dy = rng.standard_normal(shape)
    x = with_layout(np.ldexp(z, power), layout)
    got = run(layer(tier, name, kwargs, np.float64), x, with_layout(dy, layout))
    expected = run(layer(nc, name, dict(kwargs, eps=1e-300), np.float64), z, dy)
    assert rel_err(got[0], expected[0]) < 1e-13, "y"
    assert rel_err(np.ldexp(got[1], power), expected[1]) < 1e-12, "dx"
    for g, e in zip(got[2], expected[2]):
        assert rel_err(g, e) < 1e-12, "parameter gradient"


@pytest.mark.parametrize("tier", TIERS, ids=["reference", "fast"])
@pytest.mark.parametrize("name, kwargs, shape", LAYERS, ids=LAYER_IDS)
def test_float64_values_whose_squares_underflow_keep_eps(name, kwargs, shape, tier):
    """x ~ 1e-200: the variance (1e-400) is nothing beside eps = 1e-5, so by the formula
    x_hat = (x - mean) / sqrt(eps) (RMSNorm: x / sqrt(eps)), and dx = (g - mean(g)) / sqrt(eps)
    with g = dy * gamma (the x_hat term is 1e-198 of it). The rescaling for large values must
    not touch this."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape) * 1e-200
    dy = rng.standard_normal(shape)
    m = layer(tier, name, dict(kwargs, eps=1e-5), np.float64)
    y, dx = m(x), m.backward(dy)
    per_channel = [1] + list(shape[1:]) if name in ("LayerNorm", "RMSNorm") else [1, shape[1]] + [1] * (len(shape) - 2)
    gamma = m.weight.data.reshape(per_channel)
    beta = 0.0 if m.bias is None else m.bias.data.reshape(per_channel)
    centred = lambda a: centre(name, kwargs, a)  # noqa: E731
    root = np.sqrt(1e-5)
    np.testing.assert_allclose(y, centred(x) / root * gamma + beta, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(dx, centred(dy * gamma) / root, rtol=1e-12, atol=1e-12)


def centre(name, kwargs, a):
    """a minus its mean over the axes ``name`` normalises over (RMSNorm: a itself)."""
    if name == "RMSNorm":
        return a
    if name == "GroupNorm":                            # (N, G, C/G * L): each group's values
        g = a.reshape(a.shape[0], kwargs["num_groups"], -1)
        return (g - g.mean(axis=2, keepdims=True)).reshape(a.shape)
    axes = {"LayerNorm": tuple(range(1, a.ndim)),
            "InstanceNorm1d": tuple(range(2, a.ndim)), "InstanceNorm2d": tuple(range(2, a.ndim)),
            "InstanceNorm3d": tuple(range(2, a.ndim))}.get(
        name, (0,) + tuple(range(2, a.ndim)))          # BatchNorm: every axis but the channels
    return a - a.mean(axis=axes, keepdims=True)
