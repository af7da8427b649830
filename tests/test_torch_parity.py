"""normcore against PyTorch in float64: forward, every gradient, running statistics, state dicts."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import normcore as nc
from norm_tiers import LAYOUTS, in_layout, suite_settings
from normcore._install import TORCH_CPU
from normcore.torch_bridge import to_torch
from normcore.layer_cases import randomize_parameters

torch = pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")
torch.set_default_dtype(torch.float64)

TOL = 1e-10


def pair(name, *args, **kwargs):
    """The same layer in normcore and in torch.nn (from the bridge), with the same random
    parameters. The bridge's layer must be the one torch builds from the same arguments: so
    normcore's defaults are torch's."""
    ours = getattr(nc, name)(*args, **kwargs)
    randomize_parameters(ours, np.random.default_rng(len(args) + 7))
    theirs = to_torch(ours)
    assert theirs.training and all(p.dtype == torch.float64 for p in theirs.parameters())
    assert repr(theirs) == repr(getattr(torch.nn, name)(*args, **kwargs))
    return ours, theirs


def run_both(ours, theirs, x, dy):
    theirs.zero_grad()
    xt = torch.tensor(x, requires_grad=True)
    yt = theirs(xt)
    yt.backward(torch.tensor(dy))
    ours.zero_grad()
    y = ours(x)
    dx = ours.backward(dy)
    return (y, dx), (yt.detach().numpy(), xt.grad.numpy())


def assert_close(a, b, what):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, what
    err = np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))) if a.size else 0.0
    assert err <= TOL, f"{what}: {err:.2e}"


def assert_same(ours, theirs, x, rng):
    dy = rng.standard_normal(x.shape)  # every norm keeps the shape
    (y, dx), (yt, dxt) = run_both(ours, theirs, x, dy)
    assert_close(y, yt, "output")
    assert_close(dx, dxt, "input gradient")
    for name, p in ours.named_parameters():
        assert_close(p.grad, dict(theirs.named_parameters())[name].grad.numpy(), f"{name} gradient")


LAYERS = [
    ("LayerNorm", (6,), {}, (4, 6)),
    ("LayerNorm", (5,), {"bias": False}, (2, 3, 5)),
    ("LayerNorm", ((3, 4),), {"eps": 1e-3}, (2, 2, 3, 4)),
    ("LayerNorm", (4,), {"elementwise_affine": False}, (3, 4)),
    ("RMSNorm", (6,), {}, (4, 6)),
    ("RMSNorm", ((2, 5),), {"eps": 1e-6}, (3, 2, 5)),
    ("RMSNorm", (4,), {"elementwise_affine": False}, (2, 3, 4)),
    ("BatchNorm1d", (3,), {}, (5, 3)),
    ("BatchNorm1d", (3,), {}, (2, 3)),
    ("BatchNorm1d", (3,), {"affine": False}, (4, 3, 5)),
    ("BatchNorm2d", (2,), {}, (3, 2, 4, 3)),
    ("GroupNorm", (2, 6), {}, (3, 6, 4)),
    ("GroupNorm", (3, 6), {}, (2, 6, 2, 3)),
    ("GroupNorm", (1, 4), {"affine": False}, (3, 4)),
    ("InstanceNorm1d", (3,), {"affine": True}, (2, 3, 5)),
    ("InstanceNorm2d", (2,), {"affine": True}, (2, 2, 3, 4)),
    ("InstanceNorm1d", (3,), {}, (3, 6)),  # unbatched
    ("BatchNorm1d", (3,), {"bias": False}, (4, 3, 5)),
    ("BatchNorm2d", (2,), {"bias": False}, (3, 2, 2, 3)),
    ("BatchNorm2d", (2,), {"affine": False, "bias": False}, (3, 2, 2, 3)),
    ("BatchNorm3d", (2,), {}, (3, 2, 2, 3, 2)),
    ("BatchNorm3d", (2,), {"bias": False, "momentum": None}, (2, 2, 3, 2, 2)),
    ("GroupNorm", (2, 6), {"bias": False}, (3, 6, 2, 2, 2)),
    ("InstanceNorm1d", (3,), {"affine": True, "bias": False}, (2, 3, 5)),
    ("InstanceNorm2d", (2,), {"affine": True, "bias": False}, (2, 2, 3, 4)),
    ("InstanceNorm3d", (2,), {"affine": True}, (2, 2, 3, 2, 2)),
    ("InstanceNorm3d", (2,), {"affine": True, "bias": False, "track_running_stats": True}, (2, 3, 2, 2)),  # unbatched
]


@pytest.mark.parametrize("name, args, kwargs, shape", LAYERS, ids=[f"{n}{s}" for n, _, _, s in LAYERS])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_forward_and_every_gradient(name, args, kwargs, shape, mode):
    rng = np.random.default_rng(0)
    ours, theirs = pair(name, *args, **kwargs)
    if mode == "eval":
        warm = rng.standard_normal(shape) * 3 + 1
        ours(warm)
        theirs(torch.tensor(warm))
        ours.eval()
        theirs.eval()
    assert_same(ours, theirs, rng.standard_normal(shape) * 2 + 0.5, rng)


@pytest.mark.parametrize("name, kwargs, shape", [
    ("BatchNorm1d", {}, (6, 3)),
    ("BatchNorm1d", {"momentum": None}, (4, 3, 5)),
    ("BatchNorm1d", {"momentum": 0.7}, (6, 3)),
    ("BatchNorm2d", {}, (3, 3, 2, 2)),
    ("BatchNorm3d", {"bias": False}, (2, 3, 2, 2, 3)),
    ("InstanceNorm1d", {"track_running_stats": True, "affine": True}, (4, 3, 5)),
    ("InstanceNorm3d", {"track_running_stats": True, "affine": True, "bias": False}, (2, 3, 2, 3, 2)),
    ("InstanceNorm1d", {"track_running_stats": True, "momentum": None}, (4, 3, 5)),
])
def test_running_statistics_over_several_steps_then_eval(name, kwargs, shape):
    rng = np.random.default_rng(1)
    ours, theirs = pair(name, 3, **kwargs)
    for step in range(5):
        assert_same(ours, theirs, rng.standard_normal(shape) * (step + 1) + step, rng)
        sd_theirs = theirs.state_dict()
        for key, value in ours.state_dict().items():
            assert_close(value, sd_theirs[key].numpy(), key)
    ours.eval()
    theirs.eval()
    assert_same(ours, theirs, rng.standard_normal(shape) * 4 - 1, rng)


def test_batchnorm_without_running_stats_in_eval():
    rng = np.random.default_rng(2)
    ours, theirs = pair("BatchNorm1d", 3, track_running_stats=False)
    ours.eval()
    theirs.eval()
    assert_same(ours, theirs, rng.standard_normal((5, 3)), rng)


@pytest.mark.parametrize("name, args, shape", [
    ("BatchNorm1d", (4,), (6, 4)), ("BatchNorm2d", (2,), (3, 2, 2, 2)), ("LayerNorm", (5,), (3, 5)),
    ("RMSNorm", (5,), (3, 5)), ("GroupNorm", (2, 4), (3, 4, 2)), ("BatchNorm3d", (2,), (3, 2, 2, 2, 2)),
])
def test_loading_a_pytorch_state_dict(name, args, shape):
    rng = np.random.default_rng(3)
    theirs = getattr(torch.nn, name)(*args).double()
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64))
    for _ in range(3):  # buffers that are not their initial values
        theirs(torch.tensor(rng.standard_normal(shape) * 2 + 1))
    ours = getattr(nc, name)(*args)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.eval()
    theirs.eval()
    assert_same(ours, theirs, rng.standard_normal(shape), rng)


def test_rmsnorm_eps_none_in_float32_matches_torch():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((3, 8)) * 1e-4).astype(np.float32)
    ours = nc.RMSNorm(8)
    theirs = torch.nn.RMSNorm(8).float()
    np.testing.assert_allclose(ours(x), theirs(torch.from_numpy(x)).detach().numpy(), rtol=1e-6)


def test_dropout_semantics_match_torch():
    x = np.random.default_rng(5).standard_normal((100, 100))
    y = nc.Dropout(0.3, rng=0)(x)
    yt = torch.nn.Dropout(0.3)(torch.tensor(x)).numpy()
    # Different generators, same law: kept values scaled by 1/(1-p), the same kept fraction.
    for out in (y, yt):
        kept = out != 0
        np.testing.assert_allclose(out[kept], x[kept] / 0.7, rtol=1e-12)
        assert abs(kept.mean() - 0.7) < 0.02
    assert not nc.Dropout(1.0)(x).any() and not torch.nn.Dropout(1.0)(torch.tensor(x)).any()


# --- DyT: torch has no layer; the bridge's twin is a few lines of torch autograd ----------------

DYT_TOL = {np.float64: 1e-10, np.float32: 1e-5, np.float16: 2e-3}  # as test_differential_torch.py


def dyt_twin_by_hand(ns, alpha, weight, bias):
    """The twin written here again from the paper's formula, to hold the bridge's to it."""
    class DyT(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.alpha = torch.nn.Parameter(torch.tensor(alpha))
            self.weight = None if weight is None else torch.nn.Parameter(torch.tensor(weight))
            self.bias = None if bias is None else torch.nn.Parameter(torch.tensor(bias))

        def forward(self, x):
            y = torch.tanh(self.alpha * x)
            y = y if self.weight is None else y * self.weight
            return y if self.bias is None else y + self.bias
    return DyT()


@suite_settings(max_examples=40)
@given(data=st.data())
def test_dyt_matches_torch_in_every_layout_and_dtype(data):
    """Random shapes (rank 1 to 4, normalized_shape of 1 or 2 axes), random alpha, gamma and
    beta, memory layouts; forward, dx, dalpha, dgamma, dbeta against torch in float64 (float32
    and float16 inputs: against float64 torch on the same rounded values)."""
    k = data.draw(st.integers(1, 2), label="len(normalized_shape)")
    ns = tuple(data.draw(st.lists(st.integers(1, 4), min_size=k, max_size=k), label="normalized_shape"))
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=4 - k), label="leading axes"))
    kwargs = data.draw(st.sampled_from([{}, {"bias": False}, {"elementwise_affine": False}]), label="kwargs")
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.float16]), label="dtype")
    layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))
    shape = lead + ns
    ours = randomize_parameters(nc.DyT(ns, **kwargs, dtype=dtype), rng)
    state = {key: v.astype(np.float64) for key, v in ours.state_dict().items()}
    theirs = dyt_twin_by_hand(ns, state["alpha"], state.get("weight"), state.get("bias"))
    x = (rng.standard_normal(shape) * 2).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    free = tuple(range(len(lead)))
    y = ours(in_layout(x, layout, rng, free))
    dx = ours.backward(in_layout(dy, layout, rng, free))
    xt = torch.tensor(x.astype(np.float64), requires_grad=True)
    yt = theirs(xt)
    yt.backward(torch.tensor(dy.astype(np.float64)))
    tol = DYT_TOL[dtype]
    pairs = [("output", y, yt), ("input gradient", dx, xt.grad)]
    pairs += [(f"{name} gradient", p.grad, dict(theirs.named_parameters())[name].grad)
              for name, p in ours.named_parameters()]
    assert [name for name, _ in ours.named_parameters()] == [name for name, _ in theirs.named_parameters()]
    for what, a, b in pairs:
        b = b.detach().numpy()
        assert a.dtype == np.dtype(dtype) and a.shape == b.shape, what
        err = np.max(np.abs(a - b)) / max(1.0, np.max(np.abs(b))) if a.size else 0.0
        assert err <= tol, f"{what}: {err:.2e}"


def test_dyt_state_dict_round_trip_with_the_bridge_twin():
    rng = np.random.default_rng(12)
    ours = randomize_parameters(nc.DyT((2, 3), alpha_init=0.9), rng)
    theirs = to_torch(ours)
    assert list(theirs.state_dict()) == ["alpha", "weight", "bias"]
    assert tuple(theirs.alpha.shape) == (1,)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.randn(p.shape, dtype=torch.float64))
    back = nc.DyT((2, 3))
    back.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert list(back.state_dict()) == list(theirs.state_dict())
    assert_same(back, theirs, rng.standard_normal((4, 2, 3)), rng)
    for kwargs, keys in [({"bias": False}, ["alpha", "weight"]), ({"elementwise_affine": False}, ["alpha"])]:
        layer = randomize_parameters(nc.DyT(4, **kwargs), rng)
        assert list(to_torch(layer).state_dict()) == keys
        assert_same(layer, to_torch(layer), rng.standard_normal((3, 4)), rng)


CHANNEL_NORMS = [("BatchNorm1d", (3,)), ("BatchNorm2d", (3,)), ("BatchNorm3d", (3,)), ("GroupNorm", (1, 3)),
                 ("InstanceNorm1d", (3,)), ("InstanceNorm2d", (3,)), ("InstanceNorm3d", (3,))]


@pytest.mark.parametrize("name, args", CHANNEL_NORMS, ids=[c[0] for c in CHANNEL_NORMS])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("bias", [True, False])
def test_bias_option_builds_what_torch_builds(name, args, affine, bias):
    """bias=False keeps the weight and drops the bias; without affine there is neither,
    whatever bias says: the same parameters, state dict keys and repr as torch.nn's layer."""
    ours = getattr(nc, name)(*args, affine=affine, bias=bias)
    theirs = getattr(torch.nn, name)(*args, affine=affine, bias=bias)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    assert ours.gamma is ours.weight and (ours.beta is None) == (theirs.bias is None)
