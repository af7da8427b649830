"""The bridge's twins of WeightNorm (torch's own ``weight_norm`` parametrization, both ways),
WSLinear, LayerScale, ReZero, Batch Renorm and Ghost BatchNorm: output, every gradient and
every buffer to 1e-10 in float64 through ``compare``, in training and evaluation; Batch
Renorm through its warm-up; the twins catch planted bugs. Batch Renorm with r and d clipped
and free, and Ghost BatchNorm's chunks: tests/test_batch_renorm_ghost.py."""

import numpy as np
import pytest

import normcore as nc
from normcore import torch_bridge
from normcore._install import TORCH_CPU
from normcore.layer_cases import randomize_parameters

torch = pytest.importorskip("torch", reason=f"the bridge's twins need PyTorch: {TORCH_CPU}")
from torch.nn.utils import parametrize  # noqa: E402

TOL = {"atol": 1e-10, "rtol": 1e-10}


def matches(module, *inputs):
    """compare at 1e-10; the report."""
    report = torch_bridge.compare(module, *inputs, out=None, **TOL)
    assert report.passed, str(report)
    return report


def with_running_stats(layer, rng, mean=0.0, var=1.0):
    """Random gamma and beta; running statistics around ``mean`` and ``var``."""
    randomize_parameters(layer, rng)
    layer.running_mean[...] = mean + rng.standard_normal(layer.num_features) * 0.3
    layer.running_var[...] = var * rng.uniform(0.5, 2.0, layer.num_features)
    return layer


# --- WeightNorm: torch's weight_norm parametrization ------------------------------------------

@pytest.mark.parametrize("dim, torch_dim", [(0, 0), (1, 1), (None, -1), (-1, -1), (-2, 0)])
@pytest.mark.parametrize("bias", [True, False])
def test_weight_norm_is_a_torch_linear_under_weight_norm(dim, torch_dim, bias):
    rng = np.random.default_rng(0)
    layer = randomize_parameters(nc.WeightNorm(nc.Linear(4, 3, bias=bias), dim=dim), rng)
    t = torch_bridge.to_torch(layer)
    assert isinstance(t, torch.nn.Linear) and parametrize.is_parametrized(t, "weight")
    (p,) = t.parametrizations.weight
    assert type(p) is torch.nn.utils.parametrizations._WeightNorm and p.dim == torch_dim
    keys = torch_bridge.key_map(layer, t)
    assert keys["weight_g"] == ("parametrizations.weight.original0", ...)
    assert keys["weight_v"] == ("parametrizations.weight.original1", ...)
    np.testing.assert_allclose(t.weight.detach().numpy(), layer.compute_weight()[0], rtol=1e-14, atol=1e-16)
    for mode in ("train", "eval"):
        getattr(layer, mode)()
        report = matches(layer, rng.standard_normal((2, 5, 4)))
        assert [r.name for r in report.rows] == ["output", "input grad"] + ["bias grad"] * bias + [
            "weight_g grad", "weight_v grad"]


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")
@pytest.mark.parametrize("api", ["parametrizations", "hooks"])  # torch.nn.utils.weight_norm, the older
@pytest.mark.parametrize("dim", [0, 1, None])
def test_from_torch_takes_a_linear_under_torchs_weight_norm(dim, api):
    torch.manual_seed(0)
    weight_norm = {"parametrizations": torch.nn.utils.parametrizations.weight_norm,
                   "hooks": torch.nn.utils.weight_norm}[api]
    t = weight_norm(torch.nn.Linear(4, 3).double(), dim=dim)
    with torch.no_grad():
        for q in t.parameters():
            q.copy_(torch.randn(q.shape, dtype=torch.float64))
    layer = torch_bridge.from_torch(t)
    assert type(layer) is nc.WeightNorm and layer.dim == dim and layer.weight_g.dtype == np.float64
    x = np.random.default_rng(1).standard_normal((5, 4))
    np.testing.assert_allclose(layer(x), t(torch.from_numpy(x)).detach().numpy(), rtol=1e-12, atol=1e-14)
    assert {"_WeightNorm", "WeightNorm"} <= set(torch_bridge.from_torch_supported())
    if api == "hooks":  # inside a model too
        model = torch_bridge.from_torch(torch.nn.Sequential(t, torch.nn.Tanh()))
        np.testing.assert_array_equal(model.state_dict()["0.weight_v"], t.weight_v.detach().numpy())


@pytest.mark.filterwarnings("ignore:`torch.nn.utils.weight_norm` is deprecated:FutureWarning")
def test_from_torch_refuses_weight_norm_where_normcore_has_no_layer():
    orthogonal_too = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(3, 3))
    parametrize.register_parametrization(orthogonal_too, "weight", torch.nn.Identity())
    conv = torch.nn.utils.parametrizations.weight_norm(torch.nn.Conv1d(2, 2, 3))
    hooked_conv = torch.nn.utils.weight_norm(torch.nn.Conv1d(2, 2, 3))
    for t, words in [(orthogonal_too, "weight_norm as its only parametrization"), (conv, "Conv1d"),
                     (hooked_conv, "Conv1d")]:
        with pytest.raises(TypeError, match=words):
            torch_bridge.from_torch(t)


# --- WSLinear, LayerScale, ReZero: twins written in torch ---------------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: nc.WSLinear(5, 3, eps=1e-3), (4, 5)),
    (lambda: nc.WSLinear(5, 3, bias=False), (2, 3, 5)),
    (lambda: nc.LayerScale(4, init=0.1), (2, 3, 4)),
    (lambda: nc.ReZero(init=0.5), (3, 4)),
])
def test_written_out_twins_match_in_train_and_eval(make, shape):
    rng = np.random.default_rng(2)
    layer = randomize_parameters(make(), rng)
    for mode in ("train", "eval"):
        getattr(layer, mode)()
        matches(layer, rng.standard_normal(shape))


def test_rezero_at_zero_only_alpha_gets_a_gradient_on_both_sides():
    layer = nc.ReZero()
    assert float(torch_bridge.to_torch(layer).alpha.detach()) == 0.0
    report = matches(layer, np.random.default_rng(3).standard_normal((3, 4)))
    rows = {r.name: r for r in report.rows}
    assert rows["input grad"].max_abs == 0.0 and abs(layer.alpha.grad[0]) > 0.1  # torch's dx = 0 too


def test_ws_linear_twin_standardises_the_weight():
    """The twin is no plain Linear: with a weight far from standardised the two differ."""
    rng = np.random.default_rng(4)
    layer = randomize_parameters(nc.WSLinear(5, 3), rng)
    layer.weight.data = layer.weight.data * 3.0 + 1.0
    x = rng.standard_normal((4, 5))
    t = torch_bridge.to_torch(layer)
    plain = torch.nn.functional.linear(torch.from_numpy(x), t.weight, t.bias).detach().numpy()
    assert not np.allclose(t(torch.from_numpy(x)).detach().numpy(), plain, atol=0.1)
    matches(layer, x)


# --- Batch Renorm ------------------------------------------------------------------------------

def test_batch_renorm_through_its_warm_up():
    """Six steps of warmup=(1, 4, 3): r_max and d_max go 1, 0 (BatchNorm), then grow; the twin
    follows its own copy of the schedule, and matches at every step, momentum=None too."""
    rng = np.random.default_rng(6)
    layer = with_running_stats(nc.BatchRenorm1d(3, r_max=2.0, d_max=1.0, momentum=None, warmup=(1, 4, 3)),
                               rng, mean=1.0, var=3.0)
    limits = []
    for _ in range(6):
        limits.append(layer.limits())
        matches(layer, rng.standard_normal((5, 3)))
    np.testing.assert_allclose(limits, [(1, 0), (1, 0), (4 / 3, 0.5), (5 / 3, 1), (2, 1), (2, 1)], rtol=1e-15)


class NoWarmUp(nc.BatchRenorm1d):
    """A planted bug: the schedule ignored, r_max and d_max from the first step."""

    def limits(self):
        return self.r_max, self.d_max


class ROmittedInBackward(nc.BatchRenorm1d):
    """A planted bug: the backward of plain BatchNorm (r taken as 1)."""

    def forward(self, x):
        y = super().forward(x)
        x_hat, rstd, r, d, batch_stats, in_dtype = self._cache
        self._cache = (x_hat, rstd, 1.0, d, batch_stats, in_dtype)
        return y


@pytest.mark.parametrize("cls, warmup, failing", [(NoWarmUp, (2, 4, 4), {"output", "weight grad", "input grad"}),
                                                  (ROmittedInBackward, None, {"input grad", "weight grad"})])
def test_the_batch_renorm_twin_catches_planted_bugs(cls, warmup, failing):
    rng = np.random.default_rng(7)
    layer = with_running_stats(cls(3, r_max=1.5, d_max=0.5, warmup=warmup), rng, mean=1.0, var=4.0)
    report = torch_bridge.compare(layer, rng.standard_normal((5, 3)), out=None, **TOL)
    assert {r.name for r in report.rows if not r.passed} == failing


# --- Ghost BatchNorm -----------------------------------------------------------------------------

def test_ghost_batchnorm_without_running_statistics_uses_the_chunks_in_eval_too():
    rng = np.random.default_rng(9)
    layer = randomize_parameters(nc.GhostBatchNorm1d(3, virtual_batch_size=2, track_running_stats=False), rng)
    x = rng.standard_normal((6, 3))
    whole = nc.BatchNorm1d(3, track_running_stats=False).eval()
    whole.load_state_dict(layer.state_dict())
    assert not np.allclose(layer.eval()(x), whole(x))
    matches(layer, x)


# --- every new layer in float32 at float32's tolerance ---------------------------------------------

@pytest.mark.parametrize("make, shape", [
    (lambda: nc.WeightNorm(nc.Linear(4, 3), dim=1), (5, 4)),
    (lambda: nc.WSLinear(4, 3), (5, 4)),
    (lambda: nc.LayerScale(4), (5, 4)),
    (lambda: nc.ReZero(), (5, 4)),
    (lambda: nc.BatchRenorm2d(2, r_max=1.1, d_max=0.1), (3, 2, 2, 2)),
    (lambda: nc.GhostBatchNorm1d(4, virtual_batch_size=2), (6, 4)),
])
def test_float32(make, shape):
    rng = np.random.default_rng(10)
    layer = randomize_parameters(make(), rng).to(np.float32)
    report = torch_bridge.compare(layer, rng.standard_normal(shape).astype(np.float32), out=None)
    assert report.dtype == "float32" and report.passed, str(report)
