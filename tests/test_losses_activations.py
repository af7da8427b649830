"""erf, GELU (exact and tanh), LogSoftmax and CrossEntropyLoss: accuracy, gradient checks in
float64 with a random upstream gradient, and parity with PyTorch to 1e-9 in float64."""

import math
import warnings

import numpy as np
import pytest

import normcore as nc
from normcore.nn import erf, erfc, log_softmax, softmax

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - the oracle is optional
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed; it is the oracle for this test")


def rel_err(a, b):
    return np.max(np.abs(a - b)) / max(1e-8, np.max(np.abs(a) + np.abs(b))) if np.size(a) else 0.0


def numerical_grad(f, x, h=1e-6):
    """Central differences of the scalar f() with respect to every entry of x (changed in place)."""
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        fp = f()
        x[i] = old - h
        fm = f()
        x[i] = old
        g[i] = (fp - fm) / (2 * h)
    return g


# --- erf ------------------------------------------------------------------------------------------

def _ulps(got, ref):
    return np.abs(got - ref) / np.spacing(np.abs(ref)).clip(min=np.finfo(float).smallest_subnormal)


def test_erf_matches_math_erf_to_a_few_ulp_on_a_dense_grid_with_tails():
    xs = np.concatenate([np.linspace(-40, 40, 160_001), np.linspace(-6, 6, 120_001),
                         np.geomspace(1e-300, 1, 600), -np.geomspace(1e-300, 1, 600),
                         [0.5, 2.0, -0.5, -2.0, np.nextafter(0.5, 0), np.nextafter(2.0, 0)]])
    ref = np.array([math.erf(v) for v in xs])
    got = erf(xs)
    assert np.max(_ulps(got, ref)) <= 3
    assert np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1e-300)) < 1e-15


def test_erf_special_values_and_symmetry():
    np.testing.assert_array_equal(erf(np.array([np.inf, -np.inf, 0.0])), [1.0, -1.0, 0.0])
    assert np.signbit(erf(-0.0)) and np.isnan(erf(np.nan))
    x = np.linspace(-7, 7, 1001)
    np.testing.assert_array_equal(erf(-x), -erf(x))
    assert erf(3.0).shape == () and erf(np.float32(1.0)).dtype == np.float64


def test_erfc_keeps_relative_accuracy_in_the_tail():
    # erfc(x) ~ exp(-x^2) / (x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4) - 15/(8x^6) + ...): at x = 20
    # the asymptotic series is exact to ~1e-13 after five terms; erfc(10) from math.erfc
    for x in (10.0, 15.0, 20.0, 25.0):
        assert abs(erfc(x) - math.erfc(x)) <= 4 * np.spacing(math.erfc(x))
    np.testing.assert_array_equal(erfc(np.array([np.inf, -np.inf, 40.0])), [0.0, 2.0, 0.0])
    xs = np.linspace(-6, 26, 20_001)  # erfc(26) = 5.7e-296: still a normal float
    ref = np.array([math.erfc(v) for v in xs])
    assert np.max(np.abs(erfc(xs) - ref) / ref) < 1e-13  # 1 - erf in [0.5, 2) costs up to ~100 ulp


@needs_torch
def test_erf_matches_torch_special_erf():
    x = np.concatenate([np.linspace(-40, 40, 40_001), np.random.default_rng(0).standard_normal(10_000) * 3])
    np.testing.assert_allclose(erf(x), torch.special.erf(torch.from_numpy(x)).numpy(), rtol=4e-16, atol=0)
    tail = np.linspace(-5, 10, 3001)
    np.testing.assert_allclose(erfc(tail), torch.special.erfc(torch.from_numpy(tail)).numpy(), rtol=1e-13, atol=0)


# --- GELU ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_gradient_check(approximate):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 7)) * 3
    dy = rng.standard_normal(x.shape)
    g = nc.GELU(approximate=approximate)
    g(x)
    dx = g.backward(dy)
    num = numerical_grad(lambda: float(np.sum(g(x) * dy)), x)
    assert rel_err(dx, num) < 1e-8


@needs_torch
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_torch(approximate):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.standard_normal(499) * 4, np.linspace(-40, 40, 801)]).reshape(13, -1)
    dy = rng.standard_normal(x.shape)
    g = nc.GELU(approximate)
    y, dx = g(x), g.backward(dy)
    t = torch.tensor(x, requires_grad=True)
    yt = F.gelu(t, approximate=approximate)
    yt.backward(torch.from_numpy(dy))
    # atol: in the negative tail 1 + erf (PyTorch, exact form) and 1 + tanh (both, tanh form)
    # cancel, so values below ~1e-7 carry a relative error the two codes round differently;
    # normcore's exact form keeps the true tiny value there (erfc), e.g. GELU(-30) = -1.5e-196
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gelu_exact_keeps_the_negative_tail():
    y = nc.GELU()(np.array([-30.0, -10.0]))
    expect = [-30.0 * 0.5 * math.erfc(30 / math.sqrt(2)), -10.0 * 0.5 * math.erfc(10 / math.sqrt(2))]
    np.testing.assert_allclose(y, expect, rtol=1e-12)


def test_gelu_forms_differ_little_and_invalid_approximate_is_a_value_error():
    x = np.linspace(-6, 6, 2001)
    assert np.max(np.abs(nc.GELU()(x) - nc.GELU("tanh")(x))) < 5e-4
    for bad in ("exact", "Tanh", None, True):
        with pytest.raises(ValueError, match="'none'.*'tanh'"):
            nc.GELU(approximate=bad)
    assert "approximate='tanh'" in repr(nc.GELU("tanh"))


def test_gelu_float32_and_float16_keep_their_dtype():
    for dtype in (np.float32, np.float16):
        x = np.linspace(-3, 3, 7).astype(dtype)
        g = nc.GELU()
        y = g(x)
        assert y.dtype == dtype and g.backward(np.ones_like(x)).dtype == dtype
        np.testing.assert_allclose(y, nc.GELU()(x.astype(np.float64)), rtol=2e-3 if dtype == np.float16 else 1e-6,
                                   atol=1e-3 if dtype == np.float16 else 1e-7)


def test_feed_forward_activation_names():
    assert nc.FeedForward(4, 8, rng=0).act.approximate == "none"
    assert nc.FeedForward(4, 8, activation="gelu_tanh", rng=0).act.approximate == "tanh"


# --- LogSoftmax --------------------------------------------------------------------------------------

def test_log_softmax_is_exact_at_extreme_inputs():
    x = np.array([-800.0, 1e4])
    with np.errstate(divide="ignore"):
        naive = np.log(softmax(x))
    assert naive[0] == -np.inf  # what log(softmax(x)) gives
    np.testing.assert_array_equal(nc.LogSoftmax()(x), [-10800.0, 0.0])
    np.testing.assert_array_equal(log_softmax(x), [-10800.0, 0.0])


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_log_softmax_gradient_check(axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 4, 5)) * 2
    dy = rng.standard_normal(x.shape)
    m = nc.LogSoftmax(axis)
    m(x)
    dx = m.backward(dy)
    num = numerical_grad(lambda: float(np.sum(m(x) * dy)), x)
    assert rel_err(dx, num) < 1e-8


@needs_torch
@pytest.mark.parametrize("x", [[-800.0, 1e4], [1e4, 1e4 - 1.0, -1e4], [0.0, 0.0, 0.0]])
def test_log_softmax_matches_torch_at_extreme_inputs(x):
    x = np.array([x, x[::-1]])
    dy = np.random.default_rng(4).standard_normal(x.shape)
    m = nc.LogSoftmax()
    y, dx = m(x), m.backward(dy)
    t = torch.tensor(x, requires_grad=True)
    yt = F.log_softmax(t, dim=-1)
    yt.backward(torch.from_numpy(dy))
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_log_softmax_bad_axis():
    with pytest.raises(ValueError, match="axis"):
        nc.LogSoftmax(2)(np.zeros((2, 3)))


# --- CrossEntropyLoss -------------------------------------------------------------------------------

SHAPES = [(7, 5), (2, 5, 3, 4), (5,)]  # rank 2, rank 4 (classes on axis 1) and unbatched
C = 5
WEIGHT = np.array([0.3, 1.7, 1.0, 0.6, 2.2])


def _target_shape(shape):
    return () if len(shape) == 1 else shape[:1] + shape[2:]


def _data(shape, ignore, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape) * 3
    y = rng.integers(0, C, _target_shape(shape))
    if ignore and y.ndim:
        y.flat[::3] = -100
    return x, y


def _upstream(loss, reduction, seed=5):
    return np.random.default_rng(seed).standard_normal(np.shape(loss)) if reduction == "none" else 0.7


CE_OPTIONS = [dict(weight=w, label_smoothing=ls, reduction=r)
              for w in (None, WEIGHT) for ls in (0.0, 0.25) for r in ("mean", "sum", "none")]


def _id(opts):
    return f"{'w' if opts['weight'] is not None else 'nw'}-ls{opts['label_smoothing']}-{opts['reduction']}"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("opts", CE_OPTIONS, ids=_id)
def test_cross_entropy_gradient_check(shape, opts):
    x, y = _data(shape, ignore=True)
    ce = nc.CrossEntropyLoss(**opts)
    loss = ce(x, y)
    g = _upstream(loss, opts["reduction"])
    dx = ce.backward(g)
    num = numerical_grad(lambda: float(np.sum(ce(x, y) * g)), x)
    assert dx.shape == x.shape
    assert rel_err(dx, num) < 1e-8


@needs_torch
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("opts", CE_OPTIONS, ids=_id)
@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_cross_entropy_matches_torch(shape, opts, ignore_index):
    x, y = _data(shape, ignore=ignore_index == -100, seed=1)
    ce = nc.CrossEntropyLoss(ignore_index=ignore_index, **opts)
    loss = ce(x, y)
    g = _upstream(loss, opts["reduction"])
    dx = ce.backward(g)
    t = torch.tensor(x, requires_grad=True)
    w = None if opts["weight"] is None else torch.from_numpy(opts["weight"])
    lt = F.cross_entropy(t, torch.from_numpy(y), weight=w, ignore_index=ignore_index,
                         reduction=opts["reduction"], label_smoothing=opts["label_smoothing"])
    lt.backward(torch.as_tensor(g, dtype=torch.float64))
    assert loss.shape == tuple(lt.shape) and loss.dtype == np.float64
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-9, atol=1e-12)


@needs_torch
def test_cross_entropy_at_extreme_logits_matches_torch():
    x = np.array([[-800.0, 1e4, 0.0], [1e4, 1e4, -1e4]])
    y = np.array([0, 2])
    for ls in (0.0, 0.1):
        ce = nc.CrossEntropyLoss(label_smoothing=ls)
        loss, dx = ce(x, y), ce.backward()
        t = torch.tensor(x, requires_grad=True)
        lt = F.cross_entropy(t, torch.from_numpy(y), label_smoothing=ls)
        lt.backward()
        assert np.isfinite(loss)
        np.testing.assert_allclose(loss, lt.item(), rtol=1e-12)
        np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("shape", [(0, C), (2, C, 0), (0, C, 3)], ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_zero_size(shape, reduction):
    x = np.zeros(shape)
    y = np.zeros(_target_shape(shape), dtype=np.int64)
    ce = nc.CrossEntropyLoss(reduction=reduction, label_smoothing=0.1)
    loss = ce(x, y)
    expect = {"mean": np.nan, "sum": 0.0}.get(reduction)
    if reduction == "none":
        assert loss.shape == y.shape
    else:
        np.testing.assert_array_equal(loss, expect)
    dx = ce.backward(np.zeros(y.shape) if reduction == "none" else 1.0)
    assert dx.shape == shape
    if torch is not None:
        t = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        lt = F.cross_entropy(t, torch.from_numpy(y), reduction=reduction, label_smoothing=0.1)
        np.testing.assert_array_equal(loss, lt.detach().numpy())


@needs_torch
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_with_minus_inf_logits_adds_only_the_terms_torch_adds(ls, reduction):
    # -inf in a class that is not the target (finite loss without smoothing, inf with it) and
    # in an ignored position (which adds exactly 0)
    x = np.array([[0.5, -np.inf, 1.0], [-np.inf, -np.inf, 2.0], [0.0, 1.0, -0.5]])
    y = np.array([0, -100, 2])
    ce = nc.CrossEntropyLoss(weight=np.array([0.5, 1.5, 1.0]), label_smoothing=ls, reduction=reduction)
    loss = ce(x, y)
    g = _upstream(loss, reduction)
    dx = ce.backward(g)
    t = torch.tensor(x, requires_grad=True)
    lt = F.cross_entropy(t, torch.from_numpy(y), weight=torch.tensor([0.5, 1.5, 1.0], dtype=torch.float64),
                         label_smoothing=ls, reduction=reduction)
    lt.backward(torch.as_tensor(g, dtype=torch.float64))
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-12, atol=1e-15)


# Mean over kept targets whose weights sum to 0, measured on PyTorch 2.13: the loss is NaN (0/0)
# and so is the gradient at every kept position; ignored positions get 0. "sum" and "none" are
# ordinary (with smoothing, a zero-weight target still pays the smoothing term).
ZERO_W = np.array([1.0, 0.0, 2.0, 0.5])
ZERO_WEIGHT_CASES = {  # name: (weight, targets); logits (3, 4)
    "all ignored": (None, np.array([-100, -100, -100])),
    "all ignored, weighted": (ZERO_W, np.array([-100, -100, -100])),
    "kept weights 0": (ZERO_W, np.array([1, 1, -100])),
}


@pytest.mark.parametrize("case", ZERO_WEIGHT_CASES)
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_mean_over_zero_total_weight_is_nan_with_nan_gradient_where_kept(case, ls):
    weight, y = ZERO_WEIGHT_CASES[case]
    x = np.random.default_rng(0).standard_normal((3, 4))
    ce = nc.CrossEntropyLoss(weight=weight, label_smoothing=ls)
    assert np.isnan(ce(x, y))
    dx = ce.backward(0.7)
    kept = y != -100
    assert np.isnan(dx[kept]).all()
    np.testing.assert_array_equal(dx[~kept], 0.0)


@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_cross_entropy_zero_weight_targets_pay_only_the_smoothing_term(reduction):
    x = np.random.default_rng(0).standard_normal((3, 4))
    y = np.array([1, 1, -100])
    ce = nc.CrossEntropyLoss(weight=ZERO_W, label_smoothing=0.2, reduction=reduction)
    loss = ce(x, y)
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    per = -(0.2 / 4) * (logp * ZERO_W).sum(1) * (y != -100)  # (1 - eps) * w[y] * nll is 0: w[1] = 0
    np.testing.assert_allclose(loss, per.sum() if reduction == "sum" else per, rtol=1e-13)
    g = 0.7 if reduction == "sum" else np.array([0.7, -1.3, 2.0])
    q = (0.2 / 4) * ZERO_W * (y != -100)[:, None]
    softmax = np.exp(logp)
    expected = np.asarray(g).reshape(-1, 1) * (softmax * q.sum(1, keepdims=True) - q)
    np.testing.assert_allclose(ce.backward(g), expected, rtol=1e-13, atol=1e-16)


@needs_torch
@pytest.mark.parametrize("case", ZERO_WEIGHT_CASES)
@pytest.mark.parametrize("ls", [0.0, 0.2])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_zero_total_weight_matches_torch(case, ls, reduction):
    weight, y = ZERO_WEIGHT_CASES[case]
    x = np.random.default_rng(0).standard_normal((3, 4))
    ce = nc.CrossEntropyLoss(weight=weight, label_smoothing=ls, reduction=reduction)
    loss = ce(x, y)
    g = _upstream(loss, reduction)
    dx = ce.backward(g)
    t = torch.tensor(x, requires_grad=True)
    lt = F.cross_entropy(t, torch.from_numpy(y), weight=None if weight is None else torch.from_numpy(weight),
                         label_smoothing=ls, reduction=reduction)
    lt.backward(torch.as_tensor(g, dtype=torch.float64))
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-12, atol=1e-15)  # NaN == NaN here
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-12, atol=1e-15)


# No classes, measured on PyTorch 2.13 (targets all ignore_index, the only valid value): the mean
# is NaN (0/0); "sum" is 0 and "none" 0 per position, or NaN with label smoothing ((eps / C) * 0).
ZERO_CLASS_SHAPES = [(3, 0), (0, 0), (0,), (0, 0, 4), (2, 0, 0), (0, 0, 0)]


def _no_class_expected(reduction, ls, target_shape):
    if reduction == "mean":
        return np.nan
    value = np.nan if ls else 0.0
    return value if reduction == "sum" else np.full(target_shape, value)


@pytest.mark.parametrize("shape", ZERO_CLASS_SHAPES, ids=str)
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_without_classes(shape, ls, reduction):
    y = np.full(_target_shape(shape), -100)
    ce = nc.CrossEntropyLoss(reduction=reduction, label_smoothing=ls)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = ce(np.zeros(shape), y)
        dx = ce.backward(np.ones(y.shape) if reduction == "none" else 1.0)
    np.testing.assert_array_equal(loss, _no_class_expected(reduction, ls, y.shape))
    assert dx.shape == shape and loss.dtype == np.float64
    if torch is not None:
        lt = F.cross_entropy(torch.zeros(shape, dtype=torch.float64), torch.from_numpy(y),
                             reduction=reduction, label_smoothing=ls)
        np.testing.assert_array_equal(loss, lt.numpy())


def test_cross_entropy_without_classes_refuses_what_torch_refuses():
    ce = nc.CrossEntropyLoss()
    with pytest.raises(ValueError, match=r"expected every target in \[0, 0\)"):
        ce(np.zeros((3, 0)), np.zeros(3, dtype=np.int64))  # PyTorch: IndexError, target 0 out of bounds
    with pytest.raises(ValueError, match="expected at least one class on axis 1"):
        ce(np.zeros((2, 0, 4)), np.full((2, 4), -100))  # PyTorch: RuntimeError, size mismatch


def test_cross_entropy_none_needs_an_upstream_of_the_loss_shape():
    ce = nc.CrossEntropyLoss(reduction="none")
    ce(np.zeros((2, C, 3)), np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="upstream gradient"):
        ce.backward()
    with pytest.raises(ValueError, match=r"\(2, 3\)"):
        ce.backward(np.ones(6))


@pytest.mark.parametrize("make, error, match", [
    (lambda: nc.CrossEntropyLoss(reduction="avg"), ValueError, "reduction"),
    (lambda: nc.CrossEntropyLoss(label_smoothing=1.5), ValueError, "label_smoothing"),
    (lambda: nc.CrossEntropyLoss(label_smoothing=-0.1), ValueError, "label_smoothing"),
    (lambda: nc.CrossEntropyLoss(label_smoothing="0.1"), TypeError, "label_smoothing"),
    (lambda: nc.CrossEntropyLoss(weight=np.ones((2, 3))), ValueError, r"shape \(C,\)"),
    (lambda: nc.CrossEntropyLoss(weight=np.array([1, 2, 3])), TypeError, "floating-point"),
])
def test_cross_entropy_bad_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_cross_entropy_bad_inputs():
    ce = nc.CrossEntropyLoss(weight=np.ones(4))
    with pytest.raises(ValueError, match=r"expected weight of shape \(5,\), one per class .* got \(4,\)"):
        ce(np.zeros((2, 5)), np.array([0, 1]))
    ce = nc.CrossEntropyLoss()
    with pytest.raises(TypeError, match="class probabilities"):
        ce(np.zeros((2, 5)), np.full((2, 5), 0.2))
    with pytest.raises(ValueError, match=r"expected targets of shape \(2, 3\)"):
        ce(np.zeros((2, 5, 3)), np.zeros((2, 5), dtype=np.int64))  # classes are on axis 1
    with pytest.raises(ValueError, match=r"shape \(\)"):
        ce(np.zeros(5), np.array([1]))


def test_cross_entropy_weight_is_a_buffer_in_the_state_dict():
    ce = nc.CrossEntropyLoss(weight=WEIGHT)
    np.testing.assert_array_equal(ce.state_dict()["weight"], WEIGHT)
    assert "weight" not in nc.CrossEntropyLoss().state_dict()


def test_cross_entropy_float32_keeps_its_dtype():
    x, y = _data((4, C), ignore=False)
    ce = nc.CrossEntropyLoss(weight=WEIGHT, label_smoothing=0.1)
    loss = ce(x.astype(np.float32), y)
    assert loss.dtype == np.float32 and ce.backward().dtype == np.float32
    assert abs(loss - nc.CrossEntropyLoss(weight=WEIGHT, label_smoothing=0.1)(x, y)) < 1e-5
