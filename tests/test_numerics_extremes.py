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
