"""The options added to MSELoss, Softmax/LogSoftmax and MultiheadAttention: their gradients
against central differences (float64, a random upstream gradient, random parameters), and the
same numbers on Fortran-order, transposed and sliced inputs as on contiguous ones, as for the
weight side's layers, residual scaling and SoftCap (Batch Renorm's and Ghost BatchNorm's:
tests/test_batch_renorm_ghost.py)."""

import numpy as np
import pytest

import normcore as nc
from normcore import nn
from normcore.layer_cases import FixedTarget, perturb_parameters

RNG = np.random.default_rng(11)


def _layouts(x):
    """``x`` in C order, in Fortran order, as a transposed (non-contiguous) view and as a strided
    slice: each holds the same values as ``x``."""
    wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    wide[..., ::2] = x
    return {"C": np.ascontiguousarray(x), "Fortran": np.asfortranarray(x),
            "transposed": np.ascontiguousarray(np.swapaxes(x, 0, -1)).swapaxes(0, -1), "sliced": wide[..., ::2]}


@pytest.mark.parametrize("reduction", ["sum", "none"])
def test_mse_reductions_gradcheck(reduction):
    target = RNG.standard_normal((3, 4))
    report = nc.gradcheck(FixedTarget(nn.MSELoss(reduction=reduction), target), RNG.standard_normal((3, 4)), seed=3)
    assert report.passed, report.table()


@pytest.mark.parametrize("make", [lambda: nn.Softmax(axis=1, dtype=np.float64),
                                  lambda: nn.LogSoftmax(axis=0, dtype=np.float64)])
def test_softmax_dtype_gradcheck(make):
    report = nc.gradcheck(make(), RNG.standard_normal((3, 4, 2)), seed=4)
    assert report.passed, report.table()


@pytest.mark.parametrize("kw, shapes", [({"batch_first": False}, ((3, 2, 6), (4, 2, 6))),
                                        ({}, ((3, 6), (4, 6)))],  # unbatched
                         ids=["sequence-first", "unbatched"])
def test_attention_layouts_gradcheck(kw, shapes):
    attn = perturb_parameters(nn.MultiheadAttention(6, 2, rng=0, **kw), np.random.default_rng(1))
    q, k = RNG.standard_normal(shapes[0]), RNG.standard_normal(shapes[1])
    report = nc.gradcheck(attn, q, k, k.copy(), seed=5)
    assert report.passed, report.table()


@pytest.mark.parametrize("layout", ["Fortran", "transposed", "sliced"])
def test_the_new_options_give_the_same_numbers_on_every_layout(layout):
    x, target, dy = RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5)), RNG.standard_normal((4, 5))
    for make, args in [(lambda: nn.MSELoss(reduction="none"), (target,)),
                       (lambda: nn.Softmax(axis=1, dtype=np.float32), ()),
                       (lambda: nn.LogSoftmax(axis=0, dtype=np.float64), ()),
                       (lambda: nn.WeightNorm(nn.Linear(5, 5, rng=0), dim=0), ()),
                       (lambda: nn.WeightNorm(nn.Linear(5, 5, rng=0), dim=1), ()),
                       (lambda: nn.WSLinear(5, 5, rng=0), ()),
                       (lambda: perturb_parameters(nn.LayerScale(5), np.random.default_rng(2)), ()),
                       (lambda: nn.ReZero(init=0.5), ()), (lambda: nn.SoftCap(1.5), ())]:
        plain, other = make(), make()
        y = plain(x, *args)
        np.testing.assert_array_equal(other(_layouts(x)[layout], *args), y)
        np.testing.assert_array_equal(other.backward(_layouts(dy)[layout].astype(y.dtype)),
                                      plain.backward(dy.astype(y.dtype)))
        for p, q in zip(plain.parameters(), other.parameters()):
            np.testing.assert_array_equal(q.grad, p.grad)
    attn = nn.MultiheadAttention(5, 1, batch_first=False, rng=0)
    seq = RNG.standard_normal((3, 2, 5))
    y = attn(seq, seq, seq)
    view = _layouts(seq)[layout]
    np.testing.assert_array_equal(nn.MultiheadAttention(5, 1, batch_first=False, rng=0)(view, view, view), y)


def test_the_output_of_mse_none_is_not_the_cache():
    loss = nn.MSELoss(reduction="none")
    pred, target = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    value = loss(pred, target)
    value[...] = 0.0  # the caller overwrites what it got
    np.testing.assert_allclose(loss.backward(np.ones((2, 3))), 2 * (pred - target), rtol=1e-15)
