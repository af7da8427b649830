"""Sigmoid, Tanh and GELU (both forms) far into their tails, against values computed by hand.

The expected values are computed with Python's ``decimal`` at 60 digits from the very
floating-point input the layer sees (its exp is correctly rounded), then rounded once to the
layer's dtype; no PyTorch. A layer must be within a few ulp of that, in float64 and float32
(float16: within one float16 ulp, the float32 computation rounded once), forward and
backward, over -750..750: where 0.5 * (1 + tanh(x / 2)) cancels (sigmoid at x < 0),
y * (1 - y) and 1 - tanh(x)**2 cancel (|x| large), and 0.5 * x * (1 + tanh(u)) cancels
(GELU's tanh form at x < 0).
"""

import decimal
import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

import normcore as nc
from norm_tiers import suite_settings

D = decimal.Decimal
CTX = decimal.Context(prec=60, Emin=-10 ** 6, Emax=10 ** 6)
GRID = np.concatenate([np.linspace(-750, 750, 1501), [-745.2, -709.5, -100.0, -87.5, -37.0, -20.0, -17.5, -8.45,
                                                       -1e-8, -0.0, 0.0, 1e-8, 8.45, 17.5, 20.0, 37.0, 40.0]])


def exp(v):
    return CTX.exp(v)


def sigmoid_exact(v):
    """(sigmoid(v), sigmoid'(v)) of a float v, as Decimals."""
    v = D(float(v))
    s = CTX.divide(1, 1 + exp(-v))
    return s, s * (1 - s) if v < 0 else CTX.divide(exp(-v), (1 + exp(-v)) ** 2)


def tanh_slope_exact(v):
    """1 - tanh(v)**2 = 4 / (exp(v) + exp(-v))**2."""
    v = D(float(v))
    return CTX.divide(4, (exp(v) + exp(-v)) ** 2)


def rounded(values, dtype):
    """Decimals rounded once to dtype (through float64: for float32 and float16 the double
    rounding can only matter at an exact tie, which the tolerance of an ulp covers)."""
    return np.array([float(v) for v in values]).astype(dtype)


def assert_ulp(actual, expected, dtype, ulps, what):
    """|actual - expected| <= ulps * spacing(expected) in dtype, elementwise (subnormals: their spacing)."""
    actual = np.asarray(actual, dtype=np.float64)
    spacing = np.abs(np.spacing(expected.astype(dtype))).astype(np.float64)
    err = np.abs(actual - expected.astype(np.float64))
    bad = err > ulps * spacing
    assert not bad.any(), (f"{what} ({np.dtype(dtype).name}): at x = {np.flatnonzero(bad)[:3]}, error "
                           f"{(err / spacing)[bad].max():.3g} ulp > {ulps}")


def grid(dtype):
    x = GRID.astype(dtype)
    return x[np.isfinite(x)]  # float16 holds up to 65504: all of the grid


@pytest.mark.parametrize("dtype, ulps", [(np.float64, 4), (np.float32, 4), (np.float16, 1)])
def test_sigmoid_and_its_slope_to_a_few_ulp(dtype, ulps):
    """Before: 9e-9 relative at x = -20 (float64), 1.7e-4 at -30, exactly 0 below -37 where
    sigmoid is 4e-17 and less; float32 1e-4 at -8.45 and 0 below -17; the slope y * (1 - y)
    was 0 for x > 37 (float64) and x > 17 (float32)."""
    x = grid(dtype)
    dy = np.random.default_rng(0).uniform(0.5, 2.0, x.shape).astype(dtype)
    exact = [sigmoid_exact(v) for v in x]
    layer = nc.Sigmoid()
    y = layer(x)
    dx = layer.backward(dy)
    assert y.dtype == dx.dtype == dtype
    assert_ulp(y, rounded([s for s, _ in exact], dtype), dtype, ulps, "sigmoid")
    expected_dx = rounded([D(float(d)) * slope for d, (_, slope) in zip(dy, exact)], dtype)
    assert_ulp(dx, expected_dx, dtype, ulps + (2 if dtype != np.float16 else 0), "sigmoid dx")


@pytest.mark.parametrize("dtype, ulps", [(np.float64, 4), (np.float32, 4), (np.float16, 1)])
def test_tanh_slope_to_a_few_ulp(dtype, ulps):
    """1 - y**2 lost 3e-8 of its value at |x| = 10 and was 0 beyond 19 (float64), 9 (float32)."""
    x = grid(dtype)
    dy = np.random.default_rng(1).uniform(0.5, 2.0, x.shape).astype(dtype)
    layer = nc.Tanh()
    y = layer(x)
    dx = layer.backward(dy)
    tanh_exact = [CTX.divide(exp(D(float(v))) - exp(-D(float(v))), exp(D(float(v))) + exp(-D(float(v)))) for v in x]
    assert_ulp(y, rounded(tanh_exact, dtype), dtype, max(ulps, 2), "tanh")
    expected_dx = rounded([D(float(d)) * tanh_slope_exact(v) for d, v in zip(dy, x)], dtype)
    assert_ulp(dx, expected_dx, dtype, ulps + (2 if dtype != np.float16 else 0), "tanh dx")


K, C = math.sqrt(2.0 / math.pi), 0.044715


def gelu_tanh_exact(v):
    """(y, dy/dx) of 0.5 x (1 + tanh(u)), u = k (x + c x**3), with k and c the float64 constants."""
    x = D(float(v))
    u = D(K) * (x + D(C) * x ** 3)
    half_1_plus_t = CTX.divide(1, 1 + exp(-2 * u))  # 0.5 (1 + tanh u)
    sech2 = CTX.divide(4, (exp(u) + exp(-u)) ** 2)
    return x * half_1_plus_t, half_1_plus_t + x / 2 * sech2 * D(K) * (1 + 3 * D(C) * x ** 2)


@suite_settings(60)
@given(x=st.floats(-60.0, 60.0), dtype=st.sampled_from([np.float64, np.float32]))
def test_gelu_tanh_in_the_tails(x, dtype):
    """y(-10) was 0 (1 + tanh(u) cancels; PyTorch gives 0 too), where it is -2e-37. u is
    rounded once (|u| * 1e-16 relative in exp(-2|u|)), hence 1e-13 (float32: 1e-5)."""
    xs = np.array([x, -10.0, -5.0, 3.0], dtype=dtype)
    layer = nc.GELU(approximate="tanh")
    y = layer(xs)
    dx = layer.backward(np.ones_like(xs))
    for i, v in enumerate(xs):
        ey, edx = (float(t) for t in gelu_tanh_exact(v))
        rtol = 1e-13 if dtype == np.float64 else 1e-5
        tiny = float(np.finfo(dtype).smallest_subnormal) * 4
        assert abs(float(y[i]) - ey) <= rtol * abs(ey) + tiny, (v, y[i], ey)
        assert abs(float(dx[i]) - edx) <= rtol * max(abs(edx), 1e-30) + tiny, (v, dx[i], edx)


@pytest.mark.filterwarnings("ignore:overflow encountered")
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_at_huge_inputs(approximate):
    """x = +-1e200: y = x or -0, dx = 1 or 0; the tanh form gave NaN (x**3 = inf times a slope 0)."""
    layer = nc.GELU(approximate=approximate)
    x = np.array([1e200, -1e200, 1e30, -1e30])
    y = layer(x)
    dx = layer.backward(np.full(4, 2.0))
    np.testing.assert_array_equal(y, [1e200, 0.0, 1e30, 0.0])
    np.testing.assert_array_equal(dx, [2.0, 0.0, 2.0, 0.0])


@pytest.mark.filterwarnings("ignore:overflow encountered in subtract")  # -1e308 - 1e308 = -inf, exp(-inf) = 0
def test_softmax_and_log_softmax_at_extremes():
    """Already stable (the row maximum is subtracted); held so: huge and masked rows against
    exact values."""
    x = np.array([[1e308, -1e308, 0.0], [-800.0, 1e4, 1e4], [-np.inf, 0.0, -745.0]])
    p = nc.Softmax()(x)
    logp = nc.LogSoftmax()(x)
    np.testing.assert_array_equal(p[0], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(logp[0], [0.0, -np.inf, -1e308])
    np.testing.assert_array_equal(p[1], [0.0, 0.5, 0.5])
    np.testing.assert_allclose(logp[1], [-10800.0 - math.log(2), -math.log(2), -math.log(2)], rtol=1e-15)
    np.testing.assert_array_equal(p[2, :2], [0.0, 1.0])
    assert p[2, 2] == pytest.approx(math.exp(-745.0), abs=5e-324)
    np.testing.assert_allclose(logp[2], [-np.inf, 0.0, -745.0], rtol=1e-15)
