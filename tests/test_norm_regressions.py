"""Regressions: each test failed on an earlier version of the norm layers and passes now."""

import re

import numpy as np
import pytest

from norm_tiers import TIER_IDS, TIERS
from normcore._install import TORCH_CPU

tiers = pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)


# --- found by the differential suite ---------------------------------------------------------

@tiers
@pytest.mark.parametrize("name, shape", [("BatchNorm1d", (1, 3)), ("BatchNorm1d", (1, 3, 1)),
                                         ("BatchNorm2d", (1, 3, 1, 1))])
def test_batchnorm_without_running_stats_checks_the_batch_in_evaluation_too(tier, name, shape):
    """track_running_stats=False uses the batch's statistics in evaluation, so, as in training
    and in PyTorch, one value per channel and eps <= 0 raise there too (they gave beta and a
    division by zero)."""
    bn = getattr(tier, name)(3, track_running_stats=False).eval()
    with pytest.raises(ValueError, match=r"Expected more than 1 value per channel when training, "
                                         rf"got input size \({shape[0]}, 3"):
        bn(np.ones(shape))
    bn = getattr(tier, name)(3, eps=0.0, track_running_stats=False).eval()
    with pytest.raises(ValueError, match="batch_norm eps must be positive during training"):
        bn(np.arange(12.0).reshape((4, 3) + shape[2:]))
    bn = getattr(tier, name)(3, eps=0.0).eval()  # the running statistics: eps = 0 is allowed
    assert bn(np.ones(shape)).shape == shape


# --- issue 10 ---------------------------------------------------------------------------------------

def run(layer, x, dy):
    """y, dx and the parameters' gradients of one forward and backward."""
    layer.zero_grad()
    y = layer(x)
    dx = layer.backward(dy)
    return y, dx, [p.grad.copy() for p in layer.parameters()]


def with_random_affine(layer, rng):
    for p in layer.parameters():
        p.data[...] = rng.standard_normal(p.shape) + 1
    return layer


@tiers
@pytest.mark.parametrize("groups, shape", [(2, (2, 4, 5)), (3, (2, 6, 3, 4)), (1, (3, 4, 2, 2)), (4, (2, 4, 3))])
def test_groupnorm_of_fortran_order_input_equals_c_order(tier, groups, shape):
    """GroupNorm grouped a Fortran-order input's channels wrongly (a reshape of its memory
    order, not of its index order)."""
    rng = np.random.default_rng(0)
    layer = with_random_affine(tier.GroupNorm(groups, shape[1]), rng)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    c = run(layer, np.ascontiguousarray(x), np.ascontiguousarray(dy))
    f = run(layer, np.asfortranarray(x), np.asfortranarray(dy))
    for a, b, what in zip(c[:2] + tuple(c[2]), f[:2] + tuple(f[2]), ["y", "dx", "dgamma", "dbeta"]):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12, err_msg=what)


EMPTY = [
    ("LayerNorm", (4,), {}, (0, 4)),
    ("LayerNorm", (4,), {}, (2, 0, 4)),
    ("LayerNorm", ((2, 3),), {}, (0, 2, 3)),
    ("RMSNorm", (4,), {}, (0, 4)),
    ("RMSNorm", (4,), {}, (3, 0, 4)),
    ("GroupNorm", (2, 4), {}, (0, 4, 3)),
    ("GroupNorm", (2, 4), {}, (2, 4, 0)),
    ("GroupNorm", (2, 4), {}, (2, 4, 3, 0)),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 0)),
    ("InstanceNorm1d", (3,), {"affine": True}, (0, 3, 4)),
    ("InstanceNorm1d", (3,), {"affine": True}, (3, 0)),
    ("InstanceNorm2d", (3,), {"affine": True}, (2, 3, 0, 4)),
    ("BatchNorm1d", (3,), {}, (0, 3)),
    ("BatchNorm1d", (3,), {}, (2, 3, 0)),
    ("BatchNorm2d", (3,), {}, (0, 3, 2, 2)),
    ("BatchNorm2d", (3,), {}, (2, 3, 0, 2)),
    ("BatchNorm3d", (3,), {"bias": False}, (0, 3, 2, 2, 1)),
    ("InstanceNorm3d", (3,), {"affine": True, "bias": False}, (2, 3, 2, 0, 1)),
]


@tiers
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name, args, kwargs, shape", EMPTY, ids=[f"{c[0]}{c[3]}" for c in EMPTY])
@pytest.mark.filterwarnings("error")  # no 0/0 on the way
def test_zero_size_inputs_give_empty_results(tier, name, args, kwargs, shape, training):
    """An empty batch, sequence or spatial axis gives an empty output and input gradient, no
    parameter gradient, and (BatchNorm in training, as in PyTorch) one more batch counted with
    the running statistics unchanged. They raised IndexError, or 'more than 1 value'."""
    layer = with_random_affine(getattr(tier, name)(*args, **kwargs), np.random.default_rng(0)).train(training)
    before = layer.state_dict()
    x = np.zeros(shape)
    y, dx, grads = run(layer, x, np.ones(shape))
    assert y.shape == dx.shape == shape and y.dtype == dx.dtype == x.dtype
    for g in grads:
        np.testing.assert_array_equal(g, 0)
    after = layer.state_dict()
    for key, value in before.items():
        if key == "num_batches_tracked" and training and name.startswith("BatchNorm"):
            assert after[key] == value + 1
        else:
            np.testing.assert_array_equal(after[key], value, err_msg=key)


@tiers
@pytest.mark.parametrize("name, args, kwargs, shape", [c for c in EMPTY if c[0].startswith("BatchNorm")],
                         ids=[f"{c[0]}{c[3]}" for c in EMPTY if c[0].startswith("BatchNorm")])
def test_batchnorm_of_an_empty_batch_matches_pytorch(tier, name, args, kwargs, shape):
    torch = pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")
    ours = getattr(tier, name)(*args, **kwargs)
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    state = {"running_mean": torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64),
             "running_var": torch.tensor([1.5, 0.5, 2.0], dtype=torch.float64),
             "num_batches_tracked": torch.tensor(3)}
    theirs.load_state_dict({**theirs.state_dict(), **state})
    ours.load_state_dict({k: v.detach().clone().numpy() for k, v in theirs.state_dict().items()})
    for training in (True, False, True):
        ours.train(training)
        theirs.train(training)
        assert ours(np.zeros(shape)).shape == tuple(theirs(torch.zeros(shape, dtype=torch.float64)).shape)
        for key, value in theirs.state_dict().items():
            np.testing.assert_array_equal(ours.state_dict()[key], value.numpy(), err_msg=key)


CONSTANT = np.full((4, 768), 10000.1, np.float32)


@tiers
@pytest.mark.parametrize("name, make, x", [
    ("LayerNorm", lambda tier: tier.LayerNorm(768, dtype=np.float32), CONSTANT),
    ("GroupNorm over (C, L)", lambda tier: tier.GroupNorm(2, 4, dtype=np.float32), CONSTANT[None]),
    ("GroupNorm over channels", lambda tier: tier.GroupNorm(8, 768, dtype=np.float32), CONSTANT),
    ("InstanceNorm1d", lambda tier: tier.InstanceNorm1d(4, affine=True, dtype=np.float32), CONSTANT[None]),
    ("InstanceNorm1d unbatched", lambda tier: tier.InstanceNorm1d(4, affine=True, dtype=np.float32), CONSTANT),
], ids=lambda v: v.replace(" ", "-") if isinstance(v, str) else "_")
def test_a_constant_float32_row_gives_beta_exactly(tier, name, make, x):
    """x = 10000.1 everywhere: x - mean is 0, so y is beta, bit for bit. A float32 mean (or
    E[x**2] - E[x]**2) left a rounding error that rstd = 1/sqrt(eps) magnified into ~0.58."""
    layer = with_random_affine(make(tier), np.random.default_rng(1))
    y = layer(x)
    beta = layer.beta.data.astype(np.float32)
    if name.startswith("InstanceNorm"):
        beta = beta.reshape(-1, 1)  # per channel: (C, 1) broadcasts against (C, L) and (N, C, L)
    elif name == "GroupNorm over (C, L)":
        beta = beta.reshape(-1, 1)
    expected = np.broadcast_to(beta, y.shape)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, expected)
    assert np.all(np.isfinite(layer.backward(np.ones_like(x))))


HUGE = (np.random.default_rng(2).standard_normal((3, 8)) * 1e20).astype(np.float32)  # x**2 > float32's max


@tiers
@pytest.mark.parametrize("make, x", [
    (lambda tier, dt: tier.LayerNorm(8, dtype=dt), HUGE),
    (lambda tier, dt: tier.RMSNorm(8, dtype=dt), HUGE),
    (lambda tier, dt: tier.GroupNorm(2, 8, dtype=dt), HUGE),
    (lambda tier, dt: tier.GroupNorm(2, 4, dtype=dt), HUGE.reshape(3, 4, 2)),
    (lambda tier, dt: tier.InstanceNorm1d(2, affine=True, dtype=dt), HUGE.reshape(3, 2, 4)),
    # (running_var, ~1e39, would overflow float32 as PyTorch's does)
    (lambda tier, dt: tier.BatchNorm1d(8, track_running_stats=False, dtype=dt), HUGE),
], ids=["LayerNorm", "RMSNorm", "GroupNorm(2, 8)", "GroupNorm(2, 4)", "InstanceNorm1d", "BatchNorm1d"])
@pytest.mark.filterwarnings("error")  # no overflow on the way
def test_float32_inputs_whose_square_overflows(tier, make, x):
    """|x| ~ 1e20: x**2 is inf in float32. The normalised output is still the float64 one (it
    was beta, NaN or off by 2)."""
    rng = np.random.default_rng(3)
    layer32, layer64 = make(tier, np.float32), make(tier, np.float64)
    for p32, p64 in zip(layer32.parameters(), layer64.parameters()):
        p64.data[...] = p32.data[...] = rng.standard_normal(p32.shape).astype(np.float32)
    dy = rng.standard_normal(x.shape).astype(np.float32)
    y32, dx32 = layer32(x), layer32.backward(dy)
    y64, dx64 = layer64(x.astype(np.float64)), layer64.backward(dy.astype(np.float64))
    assert y32.dtype == dx32.dtype == np.float32
    np.testing.assert_allclose(y32, y64, rtol=1e-5, atol=1e-5 * np.abs(y64).max())
    np.testing.assert_allclose(dx32, dx64, rtol=1e-4, atol=1e-5 * np.abs(dx64).max())


@tiers
@pytest.mark.parametrize("groups, channels, shape", [(4, 4, (1, 4)), (4, 4, (1, 4, 1)), (2, 2, (1, 2, 1, 1)),
                                                     (1, 1, (1, 1)), (3, 3, (1, 3, 1))])
@pytest.mark.parametrize("training", [True, False], ids=["train", "eval"])
def test_groupnorm_with_one_value_per_group_raises(tier, groups, channels, shape, training):
    """N * (C/G) * prod(spatial) == 1: PyTorch raises, in training and in evaluation (normcore
    returned beta)."""
    layer = tier.GroupNorm(groups, channels).train(training)
    with pytest.raises(ValueError, match=rf"Expected more than 1 value per channel when training, "
                                         rf"got input size {re.escape(str(shape))}"):
        layer(np.ones(shape))


@tiers
@pytest.mark.parametrize("groups, channels, shape", [(4, 4, (2, 4)), (2, 4, (1, 4)), (4, 4, (1, 4, 2)), (1, 1, (2, 1))])
def test_groupnorm_with_more_than_one_value_per_group_works(tier, groups, channels, shape):
    assert tier.GroupNorm(groups, channels)(np.arange(np.prod(shape), dtype=float).reshape(shape)).shape == shape


@tiers
@pytest.mark.parametrize("name, batched, unbatched", [
    ("InstanceNorm1d", (2, 3, 5), (3, 5)),
    ("InstanceNorm2d", (2, 3, 2, 3), (3, 2, 3)),
    ("InstanceNorm3d", (2, 3, 2, 1, 3), (3, 2, 1, 3)),
])
@pytest.mark.parametrize("first", ["batched", "unbatched"])
def test_a_failed_instancenorm_forward_keeps_the_last_cache(tier, name, batched, unbatched, first):
    """A forward that failed after an input of the other batching (which set a flag before the
    check) broke the next backward; its error showed the internally batched shape (1, C, ...)
    instead of the caller's."""
    rng = np.random.default_rng(4)
    layer = getattr(tier, name)(3, affine=True, track_running_stats=True)
    good, other = (batched, unbatched) if first == "batched" else (unbatched, batched)
    x, dy = rng.standard_normal(good), rng.standard_normal(good)
    _, dx, grads = run(layer, x, dy)
    state = layer.state_dict()
    s = len(unbatched) - 1  # spatial axes
    one_spatial = other[:len(other) - s] + (1,) * s
    wrong_channels = tuple(n + 1 if i == len(other) - s - 1 else n for i, n in enumerate(other))
    with pytest.raises(ValueError, match=rf"Expected more than 1 spatial element when training, "
                                         rf"got input size {re.escape(str(one_spatial))}$"):
        layer(np.ones(one_spatial))
    with pytest.raises(ValueError, match=rf"got input of shape {re.escape(str(wrong_channels))}$"):
        layer(np.ones(wrong_channels))
    with pytest.raises(TypeError):
        layer(np.ones(other, dtype=int))
    for key, value in state.items():
        np.testing.assert_array_equal(layer.state_dict()[key], value, err_msg=key)
    layer.zero_grad()
    np.testing.assert_array_equal(layer.backward(dy), dx)
    for p, g in zip(layer.parameters(), grads):
        np.testing.assert_array_equal(p.grad, g)
