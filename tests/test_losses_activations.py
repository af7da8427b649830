"""erf, GELU (exact and tanh), LogSoftmax and CrossEntropyLoss: accuracy, gradient checks in
float64 with a random upstream gradient, and parity with PyTorch to 1e-9 in float64."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from norm_tiers import LAYOUTS, in_layout, suite_settings

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
    with pytest.raises(ValueError, match=r"expected class indices \(integers\) of shape \(2, 3\)"):
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


# --- CrossEntropyLoss with class probabilities ----------------------------------------------------
# PyTorch 2.13, measured: floating targets of the logits' shape; q[n, c] = w[c] * p'[n, c] with
# p' = (1 - eps) p + eps / C; the mean divides by the number of positions, not by the weights.

def _probabilities(shape, seed=0, kind="simplex"):
    """Targets of the logits' shape: on the simplex along the class axis, or any real numbers."""
    rng = np.random.default_rng(seed)
    if kind == "any":  # PyTorch does not check them: negative, not summing to 1
        return rng.standard_normal(shape)
    e = rng.exponential(size=shape)
    return e / e.sum(axis=0 if len(shape) == 1 else 1, keepdims=True)


def _reference_probability_loss(x, p, weight, ls, reduction):
    """PyTorch's formula written out in NumPy, the classes moved last."""
    axis = 0 if x.ndim == 1 else 1
    C = x.shape[axis]
    w = np.ones(C) if weight is None else weight
    x, p = np.moveaxis(x, axis, -1), np.moveaxis(p, axis, -1)
    logp = x - np.log(np.exp(x - x.max(-1, keepdims=True)).sum(-1, keepdims=True)) - x.max(-1, keepdims=True)
    per = -(w * ((1 - ls) * p + ls / C) * logp).sum(-1)
    return {"none": per, "sum": per.sum(), "mean": per.mean()}[reduction]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("opts", CE_OPTIONS, ids=_id)
@pytest.mark.parametrize("kind", ["simplex", "any"])
def test_cross_entropy_probabilities_gradient_check(shape, opts, kind):
    x = np.random.default_rng(3).standard_normal(shape) * 2
    p = _probabilities(shape, kind=kind)
    ce = nc.CrossEntropyLoss(**opts)
    loss = ce(x, p)
    np.testing.assert_allclose(loss, _reference_probability_loss(x, p, opts["weight"], opts["label_smoothing"],
                                                                 opts["reduction"]), rtol=1e-12)
    g = _upstream(loss, opts["reduction"])
    dx = ce.backward(g)
    num = numerical_grad(lambda: float(np.sum(ce(x, p) * g)), x)
    assert dx.shape == x.shape
    assert rel_err(dx, num) < 1e-8


def test_cross_entropy_probabilities_by_hand():
    # logits 0, 0: softmax 1/2, 1/2 and logp = -ln 2 in both classes
    x = np.zeros((2, 2))
    p = np.array([[0.25, 0.75], [0.25, 0.75]])
    ce = nc.CrossEntropyLoss()
    np.testing.assert_allclose(ce(x, p), np.log(2), rtol=1e-15)  # -(0.25 + 0.75) * -ln 2, mean of 2
    np.testing.assert_allclose(ce.backward(), [[0.125, -0.125]] * 2, rtol=1e-15)  # (softmax - p) / N
    # weights (2, 1) and smoothing 0.2: p' = 0.8 p + 0.1 = (0.3, 0.7), q = (0.6, 0.7), sum_c q = 1.3;
    # the mean divides by N = 2, not by a sum of weights
    ce = nc.CrossEntropyLoss(weight=np.array([2.0, 1.0]), label_smoothing=0.2)
    np.testing.assert_allclose(ce(x, p), 1.3 * np.log(2), rtol=1e-15)
    np.testing.assert_allclose(ce.backward(), [[0.025, -0.025]] * 2, rtol=1e-13)  # (0.5 * 1.3 - q) / 2
    # one-hot probabilities are class indices: the same sum, and the mean differs by the denominator
    y = np.array([0, 1])
    onehot = np.eye(2)[y]
    for reduction in ("sum", "none"):
        a = nc.CrossEntropyLoss(weight=np.array([2.0, 1.0]), label_smoothing=0.2, reduction=reduction)
        b = nc.CrossEntropyLoss(weight=np.array([2.0, 1.0]), label_smoothing=0.2, reduction=reduction)
        np.testing.assert_allclose(a(x, onehot), b(x, y), rtol=1e-15)
        g = np.array([0.3, -1.1]) if reduction == "none" else 0.3
        np.testing.assert_allclose(a.backward(g), b.backward(g), rtol=1e-15)
    a, b = nc.CrossEntropyLoss(weight=np.array([2.0, 1.0])), nc.CrossEntropyLoss(weight=np.array([2.0, 1.0]))
    np.testing.assert_allclose(a(x, onehot) * 2, b(x, y) * 3, rtol=1e-15)  # N = 2, sum w[y] = 3


@needs_torch
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("opts", CE_OPTIONS, ids=_id)
@pytest.mark.parametrize("kind", ["simplex", "any"])
def test_cross_entropy_probabilities_match_torch(shape, opts, kind):
    x = np.random.default_rng(4).standard_normal(shape) * 3
    p = _probabilities(shape, seed=5, kind=kind)
    ce = nc.CrossEntropyLoss(**opts)
    loss = ce(x, p)
    g = _upstream(loss, opts["reduction"])
    dx = ce.backward(g)
    t = torch.tensor(x, requires_grad=True)
    w = None if opts["weight"] is None else torch.from_numpy(opts["weight"])
    lt = F.cross_entropy(t, torch.from_numpy(p), weight=w, reduction=opts["reduction"],
                         label_smoothing=opts["label_smoothing"])
    lt.backward(torch.as_tensor(g, dtype=torch.float64))
    assert loss.shape == tuple(lt.shape) and loss.dtype == np.float64 and dx.dtype == np.float64
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-10, atol=1e-12)


@st.composite
def _probability_cases(draw):
    """(logits shape, weight or None, label_smoothing, reduction, logits layout, targets layout)."""
    C = draw(st.integers(1, 4))
    rank = draw(st.sampled_from([1, 2, 4]))
    shape = (C,) if rank == 1 else (draw(st.integers(1, 3)), C) + (
        () if rank == 2 else (draw(st.integers(1, 3)), draw(st.integers(1, 3))))
    weight = draw(st.sampled_from([None, "random"]))
    return (shape, weight, draw(st.sampled_from([0.0, 0.1, 0.5])), draw(st.sampled_from(["mean", "sum", "none"])),
            draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS)), draw(st.integers(0, 2**16)))


@given(_probability_cases())
@suite_settings(60)
def test_cross_entropy_probabilities_in_any_layout(case):
    """C, Fortran, transposed, sliced, reversed and read-only logits and targets give the numbers
    of contiguous copies, and PyTorch's when it is installed."""
    shape, weight, ls, reduction, x_layout, p_layout, seed = case
    rng = np.random.default_rng(seed)
    x, p = rng.standard_normal(shape) * 2, _probabilities(shape, seed)
    w = None if weight is None else rng.uniform(0.2, 2.0, shape[0 if len(shape) == 1 else 1])
    g = rng.standard_normal(shape[:1] + shape[2:] if len(shape) > 1 else ()) if reduction == "none" else 0.7
    ce = nc.CrossEntropyLoss(weight=w, label_smoothing=ls, reduction=reduction)
    x_laid, p_laid = in_layout(x, x_layout, rng), in_layout(p, p_layout, rng)
    loss, dx = ce(x_laid, p_laid), ce.backward(g)
    np.testing.assert_array_equal(x_laid, x)  # the inputs are not written to
    np.testing.assert_allclose(loss, ce(x, p), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(dx, ce.backward(g), rtol=1e-13, atol=1e-15)
    if torch is not None:
        t = torch.tensor(x, requires_grad=True)
        lt = F.cross_entropy(t, torch.from_numpy(p), weight=None if w is None else torch.from_numpy(w),
                             label_smoothing=ls, reduction=reduction)
        lt.backward(torch.as_tensor(g, dtype=torch.float64))
        np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(dx, t.grad.numpy(), rtol=1e-10, atol=1e-12)


# PyTorch 2.13 with no positions or no classes: the mean is NaN (0/0; numel / C is 0/0 without
# classes), sum 0, none 0 per position; smoothing changes nothing (it mixes the targets).
@pytest.mark.parametrize("shape", [(0, C), (2, C, 0), (0, C, 3), (3, 0), (0, 0), (2, 0, 4), (0,)], ids=str)
@pytest.mark.parametrize("ls", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probabilities_zero_size(shape, ls, reduction):
    ce = nc.CrossEntropyLoss(label_smoothing=ls, reduction=reduction)
    positions = shape[:1] + shape[2:] if len(shape) > 1 else ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = ce(np.zeros(shape), np.zeros(shape))
        dx = ce.backward(np.ones(positions) if reduction == "none" else 1.0)
    expect = {"mean": np.nan, "sum": 0.0, "none": np.zeros(positions)}[reduction]
    np.testing.assert_array_equal(loss, expect)
    assert dx.shape == shape
    if torch is not None:
        lt = F.cross_entropy(torch.zeros(shape, dtype=torch.float64), torch.zeros(shape, dtype=torch.float64),
                             reduction=reduction, label_smoothing=ls)
        np.testing.assert_array_equal(loss, lt.numpy())


def test_cross_entropy_probabilities_float16_is_computed_in_float32():
    x, p = np.random.default_rng(0).standard_normal((4, C)), _probabilities((4, C))
    ce = nc.CrossEntropyLoss(weight=WEIGHT, label_smoothing=0.1)
    loss16, dx16 = ce(x.astype(np.float16), p.astype(np.float16)), ce.backward()
    loss32, dx32 = ce(x.astype(np.float16).astype(np.float32), p.astype(np.float16).astype(np.float32)), ce.backward()
    assert loss16.dtype == np.float16 and dx16.dtype == np.float16
    assert loss16 == loss32.astype(np.float16)
    np.testing.assert_array_equal(dx16, dx32.astype(np.float16))
    loss = nc.CrossEntropyLoss()(x.astype(np.float32), p)  # float64 probabilities: the logits' dtype
    assert loss.dtype == np.float32


@pytest.mark.parametrize("logits, targets, error, match", [
    (np.zeros((3, 4)), np.zeros((3, 4), dtype=np.int64), TypeError,
     r"expected class indices \(integers\) of shape \(3,\) or class probabilities \(floating\) of the "
     r"logits' shape \(3, 4\), got targets of the logits' shape with dtype int64"),
    (np.zeros((3, 4)), np.zeros((3, 4), dtype=bool), TypeError, "with dtype bool"),
    (np.zeros((3, 4)), np.array([0.0, 1.0, 2.0]), TypeError, r"got targets of shape \(3,\) with dtype float64"),
    (np.zeros(4), np.float64(1.0), TypeError, r"got targets of shape \(\) with dtype float64"),
    (np.zeros((3, 4)), np.zeros((3, 5)), ValueError, r"got targets of shape \(3, 5\)"),
    (np.zeros((3, 4)), np.zeros((4, 3)), ValueError, r"got targets of shape \(4, 3\)"),
    (np.zeros((2, 4, 3)), np.zeros((2, 3, 4)), ValueError, r"of the logits' shape \(2, 4, 3\)"),
])
def test_cross_entropy_targets_of_the_wrong_kind_or_shape(logits, targets, error, match):
    with pytest.raises(error, match=match):
        nc.CrossEntropyLoss()(logits, targets)


@pytest.mark.parametrize("ignore_index", [0, 3, 7])
def test_cross_entropy_probabilities_refuse_a_non_negative_ignore_index(ignore_index):
    ce = nc.CrossEntropyLoss(ignore_index=ignore_index)
    with pytest.raises(ValueError, match=f"expected ignore_index < 0 with class probabilities.*got {ignore_index}"):
        ce(np.zeros((3, 4)), np.full((3, 4), 0.25))
    ce(np.zeros((3, 4)), np.array([0, 1, 2]))  # class indices take it


def test_cross_entropy_probabilities_ignore_a_negative_ignore_index():
    x, p = np.random.default_rng(0).standard_normal((3, 4)), _probabilities((3, 4))
    p[0] = -1.0  # a value equal to ignore_index is an ordinary (unchecked) probability
    a, b = nc.CrossEntropyLoss(ignore_index=-1), nc.CrossEntropyLoss()
    assert a(x, p) == b(x, p)
    np.testing.assert_array_equal(a.backward(), b.backward())


def test_cross_entropy_a_call_that_raises_changes_nothing():
    x, p = np.random.default_rng(0).standard_normal((3, C)), _probabilities((3, C))
    ce = nc.CrossEntropyLoss(weight=WEIGHT, label_smoothing=0.1)
    ce(x, p)
    dx = ce.backward(0.5)
    for bad in (np.zeros((3, C), dtype=np.int64), np.zeros((3, C + 1)), np.array([0.0, 1.0, 2.0]),
                np.array([0, 1, C])):
        with pytest.raises((TypeError, ValueError)):
            ce(x, bad)
        np.testing.assert_array_equal(ce.backward(0.5), dx)  # the cache of the last good forward
    np.testing.assert_array_equal(ce.weight, WEIGHT)
    with pytest.raises(ValueError):
        ce.backward(np.ones(3))  # a mean takes a scalar
    np.testing.assert_array_equal(ce.backward(0.5), dx)


def test_cross_entropy_caches_nothing_the_caller_owns():
    x, p = np.random.default_rng(0).standard_normal((3, C)), _probabilities((3, C))
    ce = nc.CrossEntropyLoss(reduction="none")
    loss = ce(x, p)
    g = np.random.default_rng(1).standard_normal(3)
    dx = ce.backward(g)
    x[...], p[...] = 0.0, 0.0
    np.testing.assert_array_equal(ce.backward(g), dx)
    loss[...] = 0.0
    np.testing.assert_array_equal(ce.backward(g), dx)


def test_cross_entropy_probabilities_through_the_torch_bridge():
    pytest.importorskip("torch", reason="PyTorch is the oracle for this test")
    from normcore.torch_bridge import compare
    rng = np.random.default_rng(0)
    cases = [
        (nc.CrossEntropyLoss(weight=rng.uniform(0.5, 2.0, 5), label_smoothing=0.1),
         (rng.standard_normal((6, 5)), _probabilities((6, 5), 1))),
        (nc.CrossEntropyLoss(reduction="none"), (rng.standard_normal((2, 5, 3)), _probabilities((2, 5, 3), 2))),
        (nc.CrossEntropyLoss(reduction="sum"), (rng.standard_normal(5), _probabilities((5,), 3, kind="any"))),
    ]
    for module, inputs in cases:
        report = compare(module, *inputs, out=None)
        assert report.passed, "\n".join(report.lines())
        assert [row.name for row in report.rows][:2] == ["output", "input grad"]


def test_loss_messages_say_what_was_expected():
    ce = nc.CrossEntropyLoss()
    with pytest.raises(ValueError, match=r"expected every target in \[0, 5\) for the logits' class axis of size 5, "
                                         r"or -100 \(ignored\), got 7"):
        ce(np.zeros((2, 5)), np.array([0, 7]))
    ce(np.zeros((2, 5)), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"expected a real scalar upstream gradient \(the loss is a scalar\), "
                                         r"got shape \(2,\) and dtype float64"):
        ce.backward(np.ones(2))
    with pytest.raises(ValueError, match=r"expected reduction to be one of \('mean', 'sum', 'none'\), got 'avg'"):
        nc.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError, match=r"expected weight of shape \(C,\), one per class, got shape \(2, 3\)"):
        nc.CrossEntropyLoss(weight=np.ones((2, 3)))
    with pytest.raises(TypeError, match=r"expected a floating-point weight of shape \(C,\), one per class, "
                                        r"got dtype int64"):
        nc.CrossEntropyLoss(weight=np.array([1, 2, 3]))
    with pytest.raises(ValueError, match=r"expected logits of shape \(C,\), \(N, C\) or \(N, C, d1, ...\)"):
        ce(np.float64(1.0), np.int64(0))
    none = nc.CrossEntropyLoss(reduction="none")
    none(np.zeros((2, 5)), np.array([0, 1]))
    with pytest.raises(ValueError, match=r"expected an upstream gradient of the loss's shape \(2,\), got None"):
        none.backward()
    with pytest.raises(ValueError, match=r"expected a target of the same shape as pred \(3, 4\), got \(2, 4\)"):
        nc.MSELoss()(np.zeros((3, 4)), np.zeros((2, 4)))
