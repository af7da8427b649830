"""The fast tier (``normcore.fast``) is the reference tier (``normcore.norms``), only faster.

* equal results: random shapes, memory layouts, dtypes and configurations, in training and
  evaluation, over several steps (outputs, input and parameter gradients, running statistics
  and num_batches_tracked): 1e-12 relative in float64, rounding level in float32 and float16;
* blocks: the result does not depend on the kernels' block size;
* hygiene: nothing cached aliases the input, the output or dx; inputs are never written;
  a forward that raises changes nothing; zero-size inputs; deepcopy, pickle, state_dict;
* accuracy in float32: at least PyTorch's, also far from zero, on constant rows, and when
  x**2 overflows float32; batch sums accurate over many rows; the cache is about x_hat.
"""

import copy
import math
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import normcore as nc
import normcore.fast as fast
from normcore.fast import kernels
from norm_tiers import suite_settings

SETTINGS = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])  # nothing timed
EPS32 = float(np.finfo(np.float32).eps)


# --- making layers and inputs ---------------------------------------------------------------------
def pair(name, **kwargs):
    """The same layer in both tiers, with random parameters loaded into both."""
    ref, fst = getattr(nc, name)(**kwargs), getattr(fast, name)(**kwargs)
    assert issubclass(type(fst), type(ref)), "a fast class subclasses its reference class"
    rng = np.random.default_rng(len(name))
    for p in ref.parameters():
        p.data[...] = 1 + 0.5 * rng.standard_normal(p.shape)
    fst.load_state_dict(ref.state_dict())
    return ref, fst


def with_layout(a, layout):
    """An array equal to ``a`` in the memory layout ``layout``."""
    if layout == "C":
        return np.ascontiguousarray(a)
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "transposed":  # a view whose axes run backwards in memory
        return np.ascontiguousarray(a.transpose()).transpose()
    if layout == "sliced":  # every other value of a larger array
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    if layout == "negative":  # negative strides on the first and last axes
        return np.ascontiguousarray(a[::-1, ..., ::-1])[::-1, ..., ::-1]
    raise ValueError(layout)


LAYOUTS = ("C", "F", "transposed", "sliced", "negative")
DTYPES = (np.float64, np.float32, np.float16)


def tolerance(dtype):
    """Relative tolerance between the tiers: 1e-12 in float64, rounding level below."""
    return {np.float64: 1e-12, np.float32: 2e-5, np.float16: 4e-3}[np.dtype(dtype).type]


def assert_close(actual, expected, rtol, what, scale=0.0):
    """|actual - expected| <= rtol * max(max|expected|, scale) where expected is finite; NaN
    and inf in the same places. ``scale``: the size of the terms a result is a difference of
    (dx cancels)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(e)
    assert np.array_equal(a[~finite], e[~finite], equal_nan=True), f"{what}: NaN or inf differ"
    scale = max(float(np.max(np.abs(e[finite]), initial=0.0)), scale, 1e-300)
    err = float(np.max(np.abs(a[finite] - e[finite]), initial=0.0))
    assert err <= rtol * scale, f"{what}: max error {err:.3e} > {rtol:g} * {scale:.3e}"


def finite_max(a):
    a = np.abs(np.asarray(a, np.float64))
    return float(np.max(a[np.isfinite(a)], initial=0.0))


def run_both(ref, fst, xs, dys, train=True):
    """Forward and backward of both tiers on each (x, dy) in turn, comparing everything."""
    ref.train(train), fst.train(train)
    for step, (x, dy) in enumerate(zip(xs, dys)):
        x_before, dy_before = x.copy(), dy.copy()
        rtol = tolerance(x.dtype)
        y_ref, y_fast = ref(x), fst(x)
        assert_close(y_fast, y_ref, rtol, f"step {step} y")
        # dx = rstd * (three terms of the size of dy * gamma), which may cancel
        gamma_max = 1.0 if ref.weight is None else finite_max(ref.weight.data)
        dx_terms = finite_max(dy) * finite_max(ref._cache[1]) * gamma_max     # _cache[1]: rstd
        assert_close(fst.backward(dy), ref.backward(dy), rtol, f"step {step} dx", scale=dx_terms)
        grad_rtol = max(rtol, 2e-5) if x.dtype == np.float16 else rtol
        for (name, p), (_, q) in zip(ref.named_parameters(), fst.named_parameters()):
            terms = float(np.sum(np.abs(dy.astype(np.float64)))) / p.size  # dgamma, dbeta: sums of dy * (x_hat or 1)
            assert_close(q.grad, p.grad, grad_rtol, f"step {step} {name}.grad", scale=terms)
        sd_ref, sd_fast = ref.state_dict(), fst.state_dict()
        assert list(sd_ref) == list(sd_fast)
        for key in sd_ref:
            assert_close(sd_fast[key], sd_ref[key], grad_rtol, f"step {step} {key}")
        assert np.array_equal(x, x_before, equal_nan=True) and np.array_equal(dy, dy_before), "inputs must not change"


def data(seed, shape, dtype, layout, steps, offset=0.0):
    rng = np.random.default_rng(seed)
    make = lambda s: with_layout((offset + s * rng.standard_normal(shape)).astype(dtype), layout)  # noqa: E731
    return [make(1 + i) for i in range(steps)], [make(1.0) for _ in range(steps)]


common = dict(seed=st.integers(0, 2 ** 16), dtype=st.sampled_from(DTYPES), layout=st.sampled_from(LAYOUTS),
              steps=st.integers(1, 3), offset=st.sampled_from([0.0, 3.0, -20.0]))


# --- the two tiers agree --------------------------------------------------------------------------
@settings(max_examples=40, **SETTINGS)
@given(lead=st.lists(st.integers(1, 5), min_size=1, max_size=2), ns=st.lists(st.integers(1, 9), min_size=1, max_size=2),
       kind=st.sampled_from(["LayerNorm", "RMSNorm"]), affine=st.booleans(), bias=st.booleans(),
       eps=st.sampled_from([1e-5, 1e-2, None]), pdtype=st.sampled_from([np.float64, np.float32]), **common)
def test_layernorm_and_rmsnorm_agree(lead, ns, kind, affine, bias, eps, pdtype, seed, dtype, layout, steps, offset):
    kwargs = dict(normalized_shape=tuple(ns), elementwise_affine=affine, dtype=pdtype)
    if kind == "LayerNorm":
        kwargs.update(bias=bias, eps=1e-5 if eps is None else eps)
    else:
        kwargs.update(eps=eps)
    ref, fst = pair(kind, **kwargs)
    run_both(ref, fst, *data(seed, tuple(lead) + tuple(ns), dtype, layout, steps, offset))


@settings(max_examples=40, **SETTINGS)
@given(n=st.integers(2, 7), c=st.integers(1, 6), spatial=st.lists(st.integers(1, 4), max_size=3),
       affine=st.booleans(), bias=st.booleans(), track=st.booleans(),
       momentum=st.sampled_from([0.1, 0.7, None, 0.0, 1.0]), eps=st.sampled_from([1e-5, 1e-1]), train=st.booleans(),
       pdtype=st.sampled_from([np.float64, np.float32]), **common)
def test_batchnorm_agrees(n, c, spatial, affine, bias, track, momentum, eps, train, pdtype, seed, dtype, layout,
                          steps, offset):
    name = {0: "BatchNorm1d", 1: "BatchNorm1d", 2: "BatchNorm2d", 3: "BatchNorm3d"}[len(spatial)]
    ref, fst = pair(name, num_features=c, eps=eps, momentum=momentum, affine=affine, track_running_stats=track,
                    dtype=pdtype, bias=bias)
    if not train and track:  # evaluation with running statistics that are not the initial ones
        run_both(ref, fst, *data(seed + 1, (n, c, *spatial), np.float64, "C", 2, offset), train=True)
    run_both(ref, fst, *data(seed, (n, c, *spatial), dtype, layout, steps, offset), train=train)


@settings(max_examples=30, **SETTINGS)
@given(n=st.integers(2, 4), groups=st.integers(1, 3), per_group=st.integers(1, 3),
       spatial=st.lists(st.integers(2, 4), max_size=3), affine=st.booleans(), bias=st.booleans(),
       eps=st.sampled_from([1e-5, 1e-1]), **common)
def test_groupnorm_agrees(n, groups, per_group, spatial, affine, bias, eps, seed, dtype, layout, steps, offset):
    ref, fst = pair("GroupNorm", num_groups=groups, num_channels=groups * per_group, eps=eps, affine=affine,
                    bias=bias)
    run_both(ref, fst, *data(seed, (n, groups * per_group, *spatial), dtype, layout, steps, offset))


@settings(max_examples=30, **SETTINGS)
@given(n=st.integers(1, 4), c=st.integers(1, 4), spatial=st.lists(st.integers(2, 5), min_size=1, max_size=3),
       unbatched=st.booleans(), affine=st.booleans(), bias=st.booleans(), track=st.booleans(),
       momentum=st.sampled_from([0.1, None, 1.0]), train=st.booleans(), **common)
def test_instancenorm_agrees(n, c, spatial, unbatched, affine, bias, track, momentum, train, seed, dtype, layout,
                             steps, offset):
    name = f"InstanceNorm{len(spatial)}d"
    ref, fst = pair(name, num_features=c, affine=affine, bias=bias, track_running_stats=track, momentum=momentum)
    shape = (c, *spatial) if unbatched else (n, c, *spatial)
    if not train and track:
        run_both(ref, fst, *data(seed + 1, shape, np.float64, "C", 2, offset), train=True)
    run_both(ref, fst, *data(seed, shape, dtype, layout, steps, offset), train=train)


ALL = [("LayerNorm", dict(normalized_shape=(6, 5)), (4, 3, 6, 5)),
       ("RMSNorm", dict(normalized_shape=10), (4, 9, 10)),
       ("BatchNorm1d", dict(num_features=6), (11, 6, 5)),
       ("BatchNorm2d", dict(num_features=3), (5, 3, 4, 2)),
       ("GroupNorm", dict(num_groups=3, num_channels=6), (11, 6, 4, 2)),
       ("InstanceNorm1d", dict(num_features=4, affine=True, track_running_stats=True), (5, 4, 7)),
       ("InstanceNorm2d", dict(num_features=4, affine=True), (3, 4, 3, 5)),
       ("BatchNorm3d", dict(num_features=3, bias=False), (3, 3, 4, 2, 3)),
       ("InstanceNorm3d", dict(num_features=2, affine=True, bias=False, track_running_stats=True), (3, 2, 3, 2, 4))]
IDS = [a[0] for a in ALL]


# --- blocks ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
def test_block_size_does_not_change_the_result(name, kwargs, shape, monkeypatch):
    """One block, or many small blocks (the last one partial); and gradcheck with many blocks."""
    results = []
    for block_bytes in (2 ** 30, 8 * math.prod(shape[1:]) + 1):
        monkeypatch.setattr(kernels, "BLOCK_BYTES", block_bytes)
        ref, fst = pair(name, **kwargs)
        run_both(ref, fst, *data(0, shape, np.float64, "C", 2, 1.0))
        results.append([fst.running_mean if getattr(fst, "running_mean", None) is not None else 0]
                       + [p.grad for p in fst.parameters()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    report = nc.gradcheck(pair(name, **kwargs)[1], np.random.default_rng(1).standard_normal(shape))
    assert report.passed, report


LONG_ROWS = [("BatchNorm1d", dict(num_features=4), (3, 4, 40)),
             ("GroupNorm", dict(num_groups=2, num_channels=4), (2, 4, 5, 8)),
             ("InstanceNorm1d", dict(num_features=3, affine=True), (2, 3, 300)),
             ("LayerNorm", dict(normalized_shape=300), (5, 300))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("sizes", [None, dict(CHUNK=4, SUM_ROWS=3, ROW_SUMS=2, BLOCK_BYTES=64),
                                   dict(CHUNK=5, SUM_ROWS=1, ROW_SUMS=1, BLOCK_BYTES=1)], ids=["default", "4", "5"])
@pytest.mark.parametrize("name, kwargs, shape", ALL + LONG_ROWS, ids=IDS + [f"{r[0]}-long" for r in LONG_ROWS])
def test_every_reduction_path_agrees(name, kwargs, shape, sizes, dtype, monkeypatch):
    """Partial sums by chunks (a multiple of CHUNK or not), column sums in parts, BatchNorm's
    sums along rows or across samples: small sizes send small inputs down every path."""
    for attr, value in (sizes or {}).items():
        monkeypatch.setattr(kernels, attr, value)
    ref, fst = pair(name, **kwargs)
    run_both(ref, fst, *data(1, shape, dtype, "C", 2, 2.0))
    fst.eval(), ref.eval()
    run_both(ref, fst, *data(2, shape, dtype, "C", 1), train=False)


# --- hygiene --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_nothing_cached_aliases_the_input_output_or_gradient(name, kwargs, shape, dtype):
    _, layer = pair(name, **kwargs)
    for p in (layer.weight, layer.bias):
        if p is not None:
            p.data[...] = 1.0 if p is layer.weight else 0.0  # y has x_hat's values: it must not *be* x_hat
    rng = np.random.default_rng(2)
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    y = layer(x)
    dx = layer.backward(dy)
    cached = [a for a in layer._cache if isinstance(a, np.ndarray)]
    for a in cached:
        for other in (x, dy, y, dx):
            assert not np.shares_memory(a, other)
    assert not np.shares_memory(y, x) and not np.shares_memory(dx, dy)
    x += 100.0
    y *= 3.0
    np.testing.assert_array_equal(layer.backward(dy), dx)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
def test_nan_and_inf_spread_as_in_the_reference(name, kwargs, shape, dtype, bad):
    """A NaN or inf poisons the same outputs (its row, group or channel, and the running
    statistics) in both tiers, and nothing else."""
    ref, fst = pair(name, **kwargs)
    xs, dys = data(9, shape, dtype, "C", 2)
    xs[0].flat[7] = bad
    run_both(ref, fst, xs, dys)


@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
def test_a_forward_that_raises_changes_nothing(name, kwargs, shape):
    _, layer = pair(name, **kwargs)
    x = np.random.default_rng(3).standard_normal(shape)
    layer(x)
    before = (layer.state_dict(), layer._cache)
    bad = [np.ones(shape[:-1] + (shape[-1] + 1,)) if name in ("LayerNorm", "RMSNorm") else np.ones((2, 99, 3)),
           x.astype(np.int64), "not an array"]
    if name.startswith("BatchNorm"):
        bad.append(np.ones((1,) + shape[1:2] + (1,) * (len(shape) - 2)))  # one value per channel
    for b in bad:
        with pytest.raises((ValueError, TypeError)):
            layer(b)
        after = layer.state_dict()
        assert all(np.array_equal(before[0][k], after[k]) for k in after)
        assert layer._cache is before[1]


@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
def test_zero_size_input(name, kwargs, shape, train):
    """An empty batch, and an empty second axis (LayerNorm, RMSNorm) or no positions (the others)."""
    ref, fst = pair(name, **kwargs)
    ref.train(train), fst.train(train)
    trailing = name in ("LayerNorm", "RMSNorm")
    empties = [(0,) + shape[1:], (shape[0], 0) + shape[2:] if trailing else shape[:2] + (0,) * (len(shape) - 2)]
    for empty in empties:
        x = np.zeros(empty)
        y_ref, y_fast = ref(x), fst(x)
        assert y_fast.shape == y_ref.shape == x.shape and y_fast.dtype == y_ref.dtype
        assert_close(fst.backward(x), ref.backward(x), 0, "dx")
        for (k, a), b in zip(ref.state_dict().items(), fst.state_dict().values()):
            np.testing.assert_array_equal(a, b, err_msg=k)


@pytest.mark.parametrize("name, kwargs, shape", ALL, ids=IDS)
def test_deepcopy_pickle_and_state_dict_between_tiers(name, kwargs, shape):
    ref, fst = pair(name, **kwargs)
    rng = np.random.default_rng(4)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    fst(x)
    for clone in (copy.deepcopy(fst), pickle.loads(pickle.dumps(fst))):
        assert type(clone) is type(fst)
        np.testing.assert_array_equal(clone.backward(dy), fst.backward(dy))
        np.testing.assert_array_equal(clone(x), fst(x))
    # a trained fast layer's state loads into a reference layer, and back
    for _ in range(2):
        fst(x + 1)
    ref.load_state_dict(fst.state_dict())
    again = getattr(fast, name)(**kwargs).load_state_dict(ref.state_dict())
    for layer in (ref, fst, again):
        layer.eval()
    np.testing.assert_allclose(fst(x), ref(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(again(x), fst(x))


def test_exports():
    import normcore
    assert normcore.fast is fast
    assert nc.LayerNorm is nc.norms.LayerNorm and nc.LayerNorm is not fast.LayerNorm
    assert set(fast.__all__) >= {"LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm",
                                 "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"}
    assert repr(fast.LayerNorm(4)) == repr(nc.LayerNorm(4))


# --- float32 accuracy -----------------------------------------------------------------------------
ROWS = [("LayerNorm", dict(normalized_shape=768)), ("GroupNorm", dict(num_groups=1, num_channels=768)),
        ("BatchNorm1d", dict(num_features=4))]


@pytest.mark.parametrize("name, kwargs", ROWS, ids=[r[0] for r in ROWS])
def test_constant_rows_give_exactly_beta(name, kwargs):
    """As PyTorch's LayerNorm: x - mean is exactly 0 for a constant row, however large."""
    _, layer = pair(name, **kwargs, dtype=np.float32)
    x = np.full((4, 768), 10000.1, np.float32)
    if name == "BatchNorm1d":
        x = np.full((768, 4), 10000.1, np.float32)
    beta = layer.bias.data.reshape((1, -1))
    y = layer(x)
    np.testing.assert_array_equal(y, np.broadcast_to(beta, y.shape))
    assert np.all(np.isfinite(layer.backward(np.ones_like(x))))


@pytest.mark.parametrize("name, kwargs, shape", ALL + LONG_ROWS, ids=IDS + [f"{r[0]}-long" for r in LONG_ROWS])
@pytest.mark.parametrize("offset, spread", [(1e4, 1e-2), (-3e5, 1.0)])
def test_float32_far_from_zero(name, kwargs, shape, offset, spread):
    """A mean a million times the spread: float32 inputs still give float32-accurate results
    (the reference computes its statistics in float64)."""
    ref, fst = pair(name, **kwargs)
    rng = np.random.default_rng(8)
    x = (offset + spread * rng.standard_normal(shape)).astype(np.float32)
    x[:, 0] = x.flat[0]  # constant: BatchNorm's channel 0, LayerNorm's rows x[i, 0], ...
    dy = rng.standard_normal(shape).astype(np.float32)
    errors = {}
    for what, a, b in (("y", fst(x), ref(x)), ("dx", fst.backward(dy), ref.backward(dy))):
        errors[what] = float(np.linalg.norm(a - b.astype(np.float64)) / np.linalg.norm(b))
    assert max(errors.values()) < 1e-5, errors


OVERFLOW = [("LayerNorm", dict(normalized_shape=64), (8, 64)),
            ("RMSNorm", dict(normalized_shape=64), (8, 64)),
            ("BatchNorm1d", dict(num_features=8), (64, 8)),
            ("GroupNorm", dict(num_groups=2, num_channels=8), (4, 8, 8)),
            ("InstanceNorm1d", dict(num_features=8), (4, 8, 8))]


@pytest.mark.parametrize("scale", [1e20, 1e-25])
@pytest.mark.parametrize("name, kwargs, shape", OVERFLOW, ids=[o[0] for o in OVERFLOW])
def test_float32_squares_that_overflow_or_underflow(name, kwargs, shape, scale):
    """|x| ~ 1e20: x**2 overflows float32; 1e-25 (and eps = 0): it underflows. The answer is
    still the float64 one, not beta and not NaN."""
    kwargs = dict(kwargs, eps=0.0) if scale < 1 and name != "BatchNorm1d" else kwargs
    ref, fst = pair(name, **kwargs)
    rng = np.random.default_rng(5)
    x = (scale * (1 + rng.standard_normal(shape))).astype(np.float32)
    dy = rng.standard_normal(shape).astype(np.float32)
    y = fst(x)
    assert np.all(np.isfinite(y))
    assert_close(y, ref(x), 1e-5, "y")
    assert_close(fst.backward(dy), ref.backward(dy), 1e-4, "dx")


def test_batch_sums_are_accurate_over_many_rows():
    """dbeta and dgamma over 16384 float32 rows: the error of adding rows one after the other
    (what np.sum does over axis 0) grows with the rows; blocks added in float64 do not."""
    rng = np.random.default_rng(6)
    dy = (1 + rng.random((16384, 64))).astype(np.float32)
    exact = dy.astype(np.float64).sum(axis=0)
    err = lambda s: float(np.max(np.abs(s - exact) / exact))  # noqa: E731
    for layer in (fast.LayerNorm(64, dtype=np.float32), fast.BatchNorm1d(64, dtype=np.float32)):
        layer(rng.standard_normal(dy.shape).astype(np.float32))
        layer.backward(dy)
        assert err(layer.bias.grad) < 2 * EPS32
    assert err(dy.sum(axis=0, keepdims=True)) > 10 * 2 * EPS32


CACHE = [("LayerNorm", dict(normalized_shape=768)), ("RMSNorm", dict(normalized_shape=768)),
         ("BatchNorm1d", dict(num_features=768)), ("GroupNorm", dict(num_groups=32, num_channels=768))]


@pytest.mark.parametrize("name, kwargs", CACHE, ids=[c[0] for c in CACHE])
def test_cache_is_x_hat_and_small_statistics(name, kwargs):
    layer = getattr(fast, name)(**kwargs, dtype=np.float32)
    x = np.random.default_rng(7).standard_normal((4096, 768)).astype(np.float32)
    layer(x)
    cached = sum(a.nbytes for a in layer._cache if isinstance(a, np.ndarray))
    assert layer._cache[0].dtype == np.float32
    assert cached <= 1.1 * x.nbytes, f"cache {cached / x.nbytes:.3f} x the input"


# --- BatchNorm's second centring pass: batches of several blocks with atypical pivot samples -----------
@pytest.mark.parametrize("blocks", [2, 4, 1000])
@suite_settings(6)
@given(name_rest=st.sampled_from([("BatchNorm1d", (3,)), ("BatchNorm1d", (2, 16)), ("BatchNorm2d", (2, 4, 8))]),
       dtype=st.sampled_from([np.float64, np.float32]), far=st.sampled_from([1e3, -3e4, 50.0]),
       seed=st.integers(0, 2 ** 16))
def test_batchnorm_second_centring_pass_with_atypical_pivot_samples(name_rest, dtype, blocks, far, seed):
    """A batch of several blocks whose pivot samples (the k samples, one every n // k, that
    standardize_channels averages for its pivot; k per block) lie ``far`` spreads away from
    the rest: the pivot is far from the mean, shift**2 is not small beside the variance, and
    the second pass must centre xc on the mean again. Held to the reference tier (run_both:
    y, dx, gradients, running statistics) and to float64 statistics computed by hand.

    The pivot samples are 1 / blocks of the batch, so they are part of its spread, and
    var = q / n - shift**2 without the second pass cancels by a factor of up to blocks - 1:
    with 2 or 4 blocks of the real size (k samples of half a MiB) a few bits; with 1000 blocks
    (of 4 samples: BLOCK_BYTES lowered) 10 bits, which float32 shows. Skipping that pass, or not
    moving the pivot with it, fails here."""
    name, rest = name_rest
    C = rest[0]
    itemsize = np.dtype(dtype).itemsize
    with pytest.MonkeyPatch.context() as mp:
        if blocks > 4:
            mp.setattr(kernels, "BLOCK_BYTES", 4 * math.prod(rest) * itemsize)
        k = kernels._block_len(math.prod(rest), itemsize)   # samples per block
        n = blocks * k + 3                                 # several blocks, the last one partial
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((n,) + rest)
        x[::n // k][:k] += far                             # the pivot samples: atypical
        x = x.astype(dtype)
        dy = rng.standard_normal(x.shape).astype(dtype)
        ref, fst = pair(name, num_features=C, dtype=dtype)
        run_both(ref, fst, [x], [dy])
        y = pair(name, num_features=C, dtype=dtype)[1](x)  # a fresh layer: the same parameters
    # by hand, in float64: the batch statistics, the running ones after one step, and y
    x64 = x.astype(np.float64)
    axes, per_channel = (0,) + tuple(range(2, x.ndim)), (1, C) + (1,) * (x.ndim - 2)
    mean = x64.mean(axis=axes)
    var = np.mean((x64 - mean.reshape(per_channel)) ** 2, axis=axes)
    m, count = fst.momentum, x.size // C
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(fst.running_mean, m * mean, rtol=rtol, atol=rtol * m * abs(far))
    np.testing.assert_allclose(fst.running_var, (1 - m) + m * var * count / (count - 1), rtol=rtol)
    gamma, beta = (p.data.astype(np.float64).reshape(per_channel) for p in (fst.weight, fst.bias))
    y64 = (x64 - mean.reshape(per_channel)) / np.sqrt(var + fst.eps).reshape(per_channel) * gamma + beta
    np.testing.assert_allclose(y, y64, rtol=0, atol=10 * rtol * np.abs(y64).max())
