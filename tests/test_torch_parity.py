"""normcore against PyTorch in float64: forward, every gradient, running statistics, state dicts."""

import numpy as np
import pytest

import normcore as nc
from normcore.torch_bridge import to_torch
from normcore.layer_cases import randomize_parameters

torch = pytest.importorskip("torch", reason="PyTorch is the optional test oracle: pip install -e '.[torch]'")
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
    ("InstanceNorm1d", {"track_running_stats": True, "affine": True}, (4, 3, 5)),
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
    ("RMSNorm", (5,), (3, 5)), ("GroupNorm", (2, 4), (3, 4, 2)),
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
