"""Optimizer update rules, learning-rate schedules and gradient clipping (no PyTorch needed)."""

import math

import numpy as np
import pytest

import normcore as nc
from normcore import optim


def one_param(value, grad):
    p = nc.Parameter(np.array(value, dtype=float))
    p.grad[...] = grad
    return p


def test_sgd_momentum_rule_by_hand():
    p = one_param([1.0, -2.0], [0.5, 1.0])
    opt = nc.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.1)
    opt.step()  # buf = g + wd p = [0.6, 0.8]
    np.testing.assert_allclose(p.data, [1.0 - 0.06, -2.0 - 0.08])
    p.grad[...] = [0.0, 0.0]
    opt.step()  # buf = 0.9 buf + wd p
    buf = 0.9 * np.array([0.6, 0.8]) + 0.1 * np.array([0.94, -2.08])
    np.testing.assert_allclose(p.data, np.array([0.94, -2.08]) - 0.1 * buf)


def test_adam_first_step_is_lr_times_sign():
    """After one step m_hat = g and v_hat = g**2, so the update is lr * g / (|g| + eps)."""
    p = one_param([1.0, 1.0, 1.0], [3.0, -0.01, 0.0])
    nc.Adam([p], lr=0.1, eps=1e-8).step()
    np.testing.assert_allclose(p.data, [0.9, 1.1, 1.0], rtol=1e-6)


def test_adamw_decay_is_decoupled_from_the_gradient_scale():
    """With zero gradient AdamW still shrinks p by (1 - lr wd); Adam's coupled decay instead
    becomes a normalised step of size lr (the decay term is divided by its own sqrt(v))."""
    pw, pa = one_param([2.0], [0.0]), one_param([2.0], [0.0])
    nc.AdamW([pw], lr=0.1, weight_decay=0.5).step()
    nc.Adam([pa], lr=0.1, weight_decay=0.5).step()
    np.testing.assert_allclose(pw.data, [2.0 * (1 - 0.05)])
    np.testing.assert_allclose(pa.data, [2.0 - 0.1], rtol=1e-6)


def test_optimizer_accepts_a_module_zero_grads_and_has_settable_lr():
    lin = nc.Linear(3, 2, rng=0)
    opt = nc.AdamW(lin, lr=1e-3)
    assert opt.params == lin.parameters()
    lin.weight.grad[...] = 1.0
    opt.zero_grad()
    assert np.all(lin.weight.grad == 0)
    opt.lr = 0.5
    assert opt.lr == 0.5
    with pytest.raises(TypeError, match="Parameters"):
        nc.SGD([np.zeros(3)], lr=0.1)
    with pytest.raises(ValueError, match="lr"):
        nc.SGD(lin.parameters(), lr=-1)
    with pytest.raises(ValueError, match="betas"):
        nc.Adam(lin.parameters(), betas=(0.9, 1.0))


def test_optimizer_reduces_a_quadratic():
    rng = np.random.default_rng(0)
    target = rng.standard_normal(5)
    for make in (lambda ps: nc.SGD(ps, lr=0.1, momentum=0.5), lambda ps: nc.AdamW(ps, lr=0.05, weight_decay=0.0)):
        p = nc.Parameter(np.zeros(5))
        opt = make([p])
        for _ in range(300):
            opt.zero_grad()
            p.grad += 2 * (p.data - target)
            opt.step()
        np.testing.assert_allclose(p.data, target, atol=1e-3)


def test_schedules():
    assert optim.constant(0.3)(0) == 0.3 == optim.constant(0.3)(1000)
    lw = optim.linear_warmup(1.0, 4)
    assert [lw(s) for s in range(6)] == [0.25, 0.5, 0.75, 1.0, 1.0, 1.0]
    inv = optim.warmup_inverse_sqrt(1.0, 4)
    assert inv(3) == 1.0 and inv(0) == 0.25 and math.isclose(inv(15), 0.5)
    values = [inv(s) for s in range(4, 50)]
    assert all(a > b for a, b in zip(values, values[1:]))
    cos = optim.warmup_cosine(1.0, 2, 10, min_lr=0.1)
    assert cos(1) == 1.0 and math.isclose(cos(9), 0.1) and math.isclose(cos(100), 0.1)
    assert math.isclose(cos(5), 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * 4 / 8)))
    assert "warmup_cosine" in repr(cos)
    with pytest.raises(ValueError, match="warmup"):
        optim.linear_warmup(1.0, 0)
    with pytest.raises(ValueError, match="total"):
        optim.warmup_cosine(1.0, 10, 10)


def test_clip_grad_norm_scales_all_gradients_together():
    a, b = one_param([0.0, 0.0], [3.0, 0.0]), one_param([0.0], [4.0])
    total = nc.clip_grad_norm([a, b], 1.0)
    assert math.isclose(total, 5.0)
    np.testing.assert_allclose(np.concatenate([a.grad, b.grad]), np.array([3.0, 0.0, 4.0]) / (5.0 + 1e-6))
    total = nc.clip_grad_norm([a, b], 10.0)  # below the limit: untouched
    assert math.isclose(total, 1.0, rel_tol=1e-5)
    np.testing.assert_allclose(np.concatenate([a.grad, b.grad]), np.array([3.0, 0.0, 4.0]) / (5.0 + 1e-6))
