"""Robustness of the Transformer stack (normcore.nn), of load_state_dict and of gradcheck.

Caches never share memory with the caller's arrays, a state dict loads whole or not at all,
zero-size inputs give empty results as in PyTorch, ReLU handles inf and NaN as PyTorch does,
Dropout keeps the input's dtype, gradcheck divides by the step it actually took, and every
bad argument raises an error of the fitting type that says what was expected.
"""

import os
import traceback
import warnings

import numpy as np
import pytest

import normcore as nc
from normcore import optim

V = 7  # vocabulary size / number of classes of every integer input below


def _x(*shape):
    return np.random.default_rng(list(shape)).standard_normal(shape)


def _tokens(*shape):
    return np.random.default_rng(list(shape)).integers(0, V, shape)


def _arrays(obj):
    """Every ndarray inside a cache (nested tuples, lists and dicts)."""
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            yield from _arrays(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            yield from _arrays(o)


# --- 5. Dropout -------------------------------------------------------------------------------------

def test_dropout_lives_in_nn():
    assert nc.Dropout is nc.nn.Dropout
    assert nc.Dropout.__module__ == "normcore.nn.dropout"
    assert not hasattr(nc.norms, "Dropout")


@pytest.mark.parametrize("in_dtype, dy_dtype", [(np.float32, np.float64), (np.float64, np.float32),
                                                (np.float16, np.float64), (np.float16, np.float32)])
@pytest.mark.parametrize("mode", ["train", "eval", "p=0", "p=1"])
def test_dropout_gradient_has_the_input_dtype(in_dtype, dy_dtype, mode):
    drop = nc.Dropout({"p=0": 0.0, "p=1": 1.0}.get(mode, 0.4), rng=0)
    if mode == "eval":
        drop.eval()
    x = _x(6, 5).astype(in_dtype)
    y = drop(x)
    assert y.dtype == in_dtype
    dy = _x(5, 6).T.astype(dy_dtype)
    dx = drop.backward(dy)
    assert dx.dtype == in_dtype
    kept = (y != 0) | (x == 0)
    scale = {"train": 1 / 0.6, "p=1": 0.0}.get(mode, 1.0)
    expected = np.where(kept, dy.astype(np.float64) * scale, 0.0) if mode != "p=1" else np.zeros_like(dy)
    np.testing.assert_allclose(dx, expected, rtol=2e-3 if in_dtype == np.float16 else 1e-6)


@pytest.mark.parametrize("p", ["0.5", None, True, [0.5]])
def test_dropout_p_must_be_a_number(p):
    with pytest.raises(TypeError, match=r"Dropout: p must be a number"):
        nc.Dropout(p)


@pytest.mark.parametrize("p", [1.5, -0.1])
def test_dropout_p_out_of_range_keeps_pytorchs_message(p):
    with pytest.raises(ValueError, match=rf"^dropout probability has to be between 0 and 1, but got {p}$"):
        nc.Dropout(p)


def test_dropout_in_eval_returns_its_input_as_pytorch_does_and_caches_none_of_it():
    x = _x(3, 4)
    for drop in (nc.Dropout(0.5, rng=0).eval(), nc.Dropout(0.0)):
        y = drop(x)
        assert y is x  # the identity, without a copy, as torch.nn.Dropout in eval
        assert not any(np.shares_memory(c, x) for c in _arrays(drop._cache))
