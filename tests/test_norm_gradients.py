"""Every norm's backward against central differences, and the properties its gradient must have."""

import importlib

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import norm_cases, randomize_parameters

CASES = norm_cases(seed=0)


@pytest.mark.parametrize("case", CASES, ids=[c.label for c in CASES])
def test_gradcheck_input_gamma_beta(case):
    report = nc.gradcheck(case.module, *case.inputs, seed=1)
    names = {c.name for c in report.checks}
    assert "x" in names
    assert {n for n, _ in case.module.named_parameters()} <= names
    assert report.passed, f"\n{report}"
    assert max(report.errors.values()) < 1e-7


def test_gradcheck_catches_a_wrong_backward(monkeypatch):
    def forgot_mean_term(dx_hat, x_hat, rstd, axes):  # drops - mean(dx_hat)
        return rstd * (dx_hat - x_hat * np.mean(dx_hat * x_hat, axis=axes, keepdims=True))

    monkeypatch.setattr("normcore.norms.layernorm.standardize_backward", forgot_mean_term)
    rng = np.random.default_rng(0)
    layer = randomize_parameters(nc.LayerNorm(5), rng)
    report = nc.gradcheck(layer, rng.standard_normal((3, 5)))
    assert not report.passed
    assert report["x"].rel_error > 1e-3 and report["weight"].passed
    assert "FAIL" in str(report)


def test_every_loss_evaluation_starts_from_the_same_state_picklable_or_not():
    """gradcheck's numerical side copies the module for each loss evaluation: from a pickled
    snapshot, or by deepcopy when it cannot be pickled. A Dropout whose generator advanced at
    each evaluation, or a BatchNorm whose running statistics did, would fail the check; the two
    ways of copying give the same report."""
    checker = importlib.import_module("normcore.gradcheck")  # the module (nc.gradcheck is the function)
    rng = np.random.default_rng(3)
    model = nc.Sequential(nc.Linear(4, 5, rng=rng), nc.Dropout(0.3, rng=7),
                          randomize_parameters(nc.BatchNorm1d(5), rng))
    x = rng.standard_normal((6, 4))
    pickled = checker.gradcheck(model, x)
    model.unpicklable = lambda: None  # a lambda: pickle refuses, deepcopy takes over
    deep = checker.gradcheck(model, x)
    assert pickled.passed and deep.passed, f"\n{pickled}\n{deep}"
    assert pickled.errors == deep.errors
    assert model.state_dict()["2.num_batches_tracked"] == 0  # the caller's module untouched


# (layer, input shape, normalised axes of x_hat / dx). The orthogonality to x_hat is exact only
# as eps -> 0 (mean(x_hat**2) = var / (var + eps)), hence the tiny eps.
EPS = 1e-12
STANDARDIZING = [
    (lambda: nc.LayerNorm(6, eps=EPS), (4, 6), (-1,)),
    (lambda: nc.LayerNorm((3, 4), eps=EPS), (2, 3, 4), (-2, -1)),
    (lambda: nc.BatchNorm1d(3, eps=EPS), (5, 3), (0,)),
    (lambda: nc.BatchNorm1d(3, eps=EPS), (4, 3, 5), (0, 2)),
    (lambda: nc.BatchNorm2d(2, eps=EPS), (3, 2, 2, 3), (0, 2, 3)),
    (lambda: nc.InstanceNorm2d(2, eps=EPS, affine=True), (3, 2, 2, 3), (2, 3)),
    (lambda: nc.BatchNorm3d(2, eps=EPS, bias=False), (3, 2, 2, 3, 2), (0, 2, 3, 4)),
    (lambda: nc.InstanceNorm3d(2, eps=EPS, affine=True, bias=False), (3, 2, 2, 3, 2), (2, 3, 4)),
]


@pytest.mark.parametrize("make, shape, axes", STANDARDIZING)
def test_input_gradient_sums_to_zero_and_is_orthogonal_to_x_hat(make, shape, axes):
    rng = np.random.default_rng(2)
    layer = randomize_parameters(make(), rng)
    x = rng.standard_normal(shape) * 3 + 1
    y = layer(x)
    dx = layer.backward(rng.standard_normal(y.shape))
    x_hat = layer._cache[0]
    scale = np.abs(dx).max()
    assert scale > 1e-3  # a real, non-vanishing gradient
    np.testing.assert_allclose(dx.sum(axis=axes), 0, atol=1e-12 * scale * x.size)
    np.testing.assert_allclose((dx * x_hat).sum(axis=axes), 0, atol=1e-12 * scale * x.size)


def test_groupnorm_input_gradient_sums_to_zero_per_group():
    rng = np.random.default_rng(3)
    layer = randomize_parameters(nc.GroupNorm(2, 4, eps=EPS), rng)
    x = rng.standard_normal((3, 4, 5))
    dx = layer.backward(rng.standard_normal(layer(x).shape)).reshape(3, 2, -1)
    x_hat = layer._cache[0].reshape(3, 2, -1)
    atol = 1e-12 * np.abs(dx).max() * dx.size
    np.testing.assert_allclose(dx.sum(-1), 0, atol=atol)
    np.testing.assert_allclose((dx * x_hat).sum(-1), 0, atol=atol)


def test_rmsnorm_input_gradient_is_orthogonal_to_x_but_does_not_sum_to_zero():
    rng = np.random.default_rng(4)
    layer = randomize_parameters(nc.RMSNorm(6), rng)
    x = rng.standard_normal((4, 6)) + 2
    layer(x)
    dx = layer.backward(rng.standard_normal((4, 6)))
    np.testing.assert_allclose((dx * x).sum(-1), 0, atol=1e-9)  # scaling x changes nothing...
    assert np.abs(dx.sum(-1)).min() > 1e-6  # ...but shifting it does: no mean was removed


# Invariances of the output: (layer, shift of the input is invisible, positive scale is invisible)
INVARIANCES = [
    (lambda: nc.LayerNorm(8, eps=EPS), True, True),
    (lambda: nc.BatchNorm1d(8, eps=EPS), True, True),
    (lambda: nc.GroupNorm(2, 8, eps=EPS), True, True),
    (lambda: nc.RMSNorm(8, eps=EPS), False, True),
]


@pytest.mark.parametrize("make, shift_invariant, scale_invariant", INVARIANCES)
def test_shift_and_scale_invariance(make, shift_invariant, scale_invariant):
    rng = np.random.default_rng(5)
    layer = randomize_parameters(make(), rng)
    x = rng.standard_normal((6, 8))
    y = layer(x)
    # BatchNorm's statistics are per channel (column): shift each column by its own amount;
    # the others' statistics are per row: shift each row.
    per_row = not isinstance(layer, nc.BatchNorm1d)
    shift = rng.standard_normal((6, 1) if per_row else (1, 8)) * 10
    scale = np.exp(rng.standard_normal((6, 1) if per_row else (1, 8)))
    assert np.allclose(layer(x + shift), y, atol=1e-9) == shift_invariant
    assert np.allclose(layer(x * scale), y, atol=1e-9) == scale_invariant
