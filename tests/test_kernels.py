"""The fast paths of the norm kernels: blocks of rows, sums without temporaries, dtypes, cache size."""

import numpy as np
import pytest

import normcore as nc
import normcore.norms.base as base
from normcore._array import sum_over, sum_to_shape
from normcore.bench import cache_bytes

ROW_WISE = [
    ("LayerNorm", lambda dt: nc.LayerNorm((6, 5), dtype=dt), (3, 7, 6, 5)),
    ("RMSNorm", lambda dt: nc.RMSNorm(10, dtype=dt), (4, 9, 10)),
    ("GroupNorm", lambda dt: nc.GroupNorm(3, 6, dtype=dt), (11, 6, 4, 2)),
]


def randomize(layer, rng):
    for p in layer.parameters():
        p.data[...] = rng.standard_normal(p.shape)
    return layer


@pytest.mark.parametrize("name, make, shape", ROW_WISE, ids=[r[0] for r in ROW_WISE])
def test_blocks_of_rows_give_the_same_results_as_one_block(name, make, shape, monkeypatch):
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    results = []
    for block_values in (10 ** 9, 70):  # one block; many blocks, the last one partial
        monkeypatch.setattr(base, "BLOCK_VALUES", block_values)
        layer = randomize(make(np.float64), np.random.default_rng(1))
        y = layer(x)
        results.append([y, layer.backward(dy)] + [p.grad.copy() for p in layer.parameters()])
        n_blocks = len(layer._cache[1])
        assert (n_blocks == 1) if block_values > x.size else (n_blocks > 2)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name, make, shape", ROW_WISE, ids=[r[0] for r in ROW_WISE])
def test_gradcheck_with_many_blocks(name, make, shape, monkeypatch):
    monkeypatch.setattr(base, "BLOCK_VALUES", 50)
    layer = randomize(make(np.float64), np.random.default_rng(2))
    x = np.random.default_rng(3).standard_normal(shape)
    layer(x)
    assert len(layer._cache[1]) > 2, "the test must run several blocks"
    report = nc.gradcheck(layer, x)
    assert report.passed, report


@pytest.mark.parametrize("shape, axes", [((50, 7), (0,)), ((9, 4, 6), (0, 2)), ((9, 4, 6), (0, 1)),
                                         ((5, 3, 4, 2), (0, 2, 3)), ((6, 5), (1,)), ((4, 3, 5), (1, 2)),
                                         ((4, 3, 5), (1,)), ((1, 8), (0,))])
def test_sum_over_equals_numpy_sum(shape, axes):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    np.testing.assert_allclose(sum_over(a, axes), a.sum(axis=axes, keepdims=True), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sum_over(a, axes, times=b), (a * b).sum(axis=axes, keepdims=True),
                               rtol=1e-12, atol=1e-12)
    assert sum_to_shape(a, shape[-1:], times=b).shape == shape[-1:]


def test_sum_over_the_batch_is_more_accurate_than_adding_rows_in_turn():
    """float32 sums over 16384 rows: blocks of sqrt(n) rows keep the error near eps, the naive
    running sum (what np.sum does over axis 0) drifts; the test fails if sum_over does that."""
    rng = np.random.default_rng(5)
    a = (1 + rng.random((16384, 64))).astype(np.float32)
    exact = a.astype(np.float64).sum(axis=0, keepdims=True)
    err = lambda s: float(np.max(np.abs(s - exact) / exact))  # noqa: E731
    assert sum_over(a, (0,)).dtype == np.float32
    assert err(sum_over(a, (0,))) < 2 * np.finfo(np.float32).eps
    assert err(a.sum(axis=0, keepdims=True)) > 10 * err(sum_over(a, (0,)))


LAYERS = [
    ("LayerNorm", lambda dt: nc.LayerNorm(48, dtype=dt), (64, 48)),
    ("RMSNorm", lambda dt: nc.RMSNorm(48, dtype=dt), (64, 48)),
    ("BatchNorm1d", lambda dt: nc.BatchNorm1d(48, dtype=dt), (64, 48)),
    ("GroupNorm", lambda dt: nc.GroupNorm(4, 48, dtype=dt), (64, 48)),
]


@pytest.mark.parametrize("name, make, shape", LAYERS, ids=[r[0] for r in LAYERS])
def test_float32_stays_float32_and_the_cache_is_about_the_input(name, make, shape):
    """float64 parameters do not upcast a float32 computation; the cache is x_hat and small stats."""
    layer = randomize(make(np.float64), np.random.default_rng(6))
    x = np.random.default_rng(7).standard_normal(shape).astype(np.float32)
    y = layer(x)
    x_hat = layer._cache[0]
    assert y.dtype == np.float32 and x_hat.dtype == np.float32
    assert cache_bytes(layer._cache) <= 1.1 * x.nbytes
    dx = layer.backward(np.random.default_rng(9).standard_normal(shape).astype(np.float32))
    assert dx.dtype == np.float32 and all(p.grad.dtype == np.float64 for p in layer.parameters())


@pytest.mark.parametrize("name, make, shape", LAYERS, ids=[r[0] for r in LAYERS])
def test_output_does_not_alias_the_cache(name, make, shape):
    """The caller may modify y in place; the next backward must not change."""
    rng = np.random.default_rng(8)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    layer = make(np.float64)
    if layer.weight is not None:
        layer.weight = None  # no affine: y is x_hat's values, and must still be its own array
        layer.bias = None
    y = layer(x)
    dx = layer.backward(dy)
    y += 100.0
    np.testing.assert_array_equal(layer.backward(dy), dx)
