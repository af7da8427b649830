"""Accuracy of the norms in float32, against a float64 reference and against PyTorch's float32.

Both tiers are checked: the reference tier (``nc.LayerNorm``, ...) and the fast tier
(``normcore.fast.LayerNorm``, ...). The reference is the reference-tier layer in float64 on
the same (float32-representable) input, gamma, beta and upstream gradient; its own error
(~1e-16) is negligible here, and gradcheck proves it right. Errors are normwise:
||a - ref|| / ||ref|| over the whole output or gradient.

Two kinds of input:
* offset 0 (x ~ N(0, 1)): every kernel is at float32's rounding floor, a few units of
  eps = 1.2e-7, and normcore must stay within a few eps.
* offset 1e4 (x ~ N(1e4, 1)): float32 stores such values to a spacing of s = 2**-10 ~ 1e-3, so
  even a perfect float32 kernel's mean is off by up to s/2, i.e. x_hat by s/2 per unit of std.
  A one-pass variance E[x**2] - E[x]**2 subtracts two numbers near 1e8 whose own rounding
  is ~8, so the variance (~1) is lost entirely; the test below shows it fails the bound.
"""

import numpy as np
import pytest

import normcore as nc
import normcore.fast

TIERS = pytest.mark.parametrize("tier", [nc, normcore.fast], ids=["reference", "fast"])

N, C, GROUPS = 256, 768, 32
OFFSETS = (0.0, 1e4)
EPS32 = float(np.finfo(np.float32).eps)
LAYERS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm")
CENTRED = ("LayerNorm", "BatchNorm1d", "GroupNorm")  # the norms that subtract a mean


def bound(kind, offset):
    """The largest normwise float32 error accepted: a few eps, or (centring norms at an offset)
    twice the spacing of float32 numbers at the offset, relative to the unit spread of x."""
    if offset and kind in CENTRED:
        return 2 * float(np.spacing(np.float32(offset)))
    return 4 * EPS32


def make_data(offset, seed=0):
    rng = np.random.default_rng(seed)
    x = (offset + rng.standard_normal((N, C))).astype(np.float32)
    dy = rng.standard_normal((N, C)).astype(np.float32)
    gamma = (1 + 0.1 * rng.standard_normal(C)).astype(np.float32)
    beta = (0.1 * rng.standard_normal(C)).astype(np.float32)
    return x, dy, gamma, beta


def normcore_layer(kind, dtype, tier=nc):
    return {"LayerNorm": lambda: tier.LayerNorm(C, dtype=dtype),
            "RMSNorm": lambda: tier.RMSNorm(C, eps=1e-5, dtype=dtype),
            "BatchNorm1d": lambda: tier.BatchNorm1d(C, dtype=dtype),
            "GroupNorm": lambda: tier.GroupNorm(GROUPS, C, dtype=dtype)}[kind]()


def run_normcore(kind, dtype, x, dy, gamma, beta, tier=nc):
    """{'y', 'dx', 'dgamma'[, 'dbeta']} of normcore's layer (of ``tier``) in ``dtype``."""
    layer = normcore_layer(kind, dtype, tier)
    layer.weight.data[...] = gamma
    if layer.bias is not None:
        layer.bias.data[...] = beta
    out = {"y": layer(x.astype(dtype)), "dx": layer.backward(dy.astype(dtype)), "dgamma": layer.weight.grad}
    if layer.bias is not None:
        out["dbeta"] = layer.bias.grad
    return out


def run_torch(torch, kind, x, dy, gamma, beta):
    """The same results from PyTorch in float32."""
    f32 = torch.float32  # explicit: other test files change torch's default dtype
    module = {"LayerNorm": lambda: torch.nn.LayerNorm(C, dtype=f32),
              "RMSNorm": lambda: torch.nn.RMSNorm(C, eps=1e-5, dtype=f32),
              "BatchNorm1d": lambda: torch.nn.BatchNorm1d(C, dtype=f32),
              "GroupNorm": lambda: torch.nn.GroupNorm(GROUPS, C, dtype=f32)}[kind]()
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        if getattr(module, "bias", None) is not None:
            module.bias.copy_(torch.from_numpy(beta))
    tx = torch.from_numpy(x).requires_grad_(True)
    ty = module(tx)
    ty.backward(torch.from_numpy(dy))
    out = {"y": ty.detach().numpy(), "dx": tx.grad.numpy(), "dgamma": module.weight.grad.numpy()}
    if getattr(module, "bias", None) is not None:
        out["dbeta"] = module.bias.grad.numpy()
    return out


def errors(result, reference):
    """Normwise relative error of each float32 result against the float64 reference."""
    return {k: float(np.linalg.norm(result[k].astype(np.float64) - reference[k]) / np.linalg.norm(reference[k]))
            for k in reference}


def normcore_errors(kind, offset, tier=nc):
    data = make_data(offset)
    reference = run_normcore(kind, np.float64, *data)
    result = run_normcore(kind, np.float32, *data, tier=tier)
    assert all(v.dtype == np.float32 for v in result.values()), "float32 in, float32 out"
    return errors(result, reference), data, reference


def assert_within(errs, limit, who):
    bad = {k: f"{e:.2e}" for k, e in errs.items() if not e <= limit}
    assert not bad, f"{who}: float32 errors above {limit:.1e}: {bad}"


@TIERS
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("kind", LAYERS)
def test_float32_error_is_within_the_rounding_floor(kind, offset, tier):
    errs, _, _ = normcore_errors(kind, offset, tier)
    assert_within(errs, bound(kind, offset), f"{tier.__name__}.{kind} at offset {offset:g}")


@TIERS
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("kind", LAYERS)
def test_float32_at_least_as_accurate_as_pytorch(kind, offset, tier):
    """normcore's float32 error <= PyTorch's, for every output and gradient.

    Exception allowed for: at offset 0, where both sit at the rounding floor (1e-7), results
    within 25% of PyTorch's count as equal. There the order of the last few roundings decides,
    and PyTorch's fused multiply-adds round once where NumPy's separate multiply and add round
    twice. Where accuracy is really at stake (a large offset) no slack is given.
    """
    torch = pytest.importorskip("torch", reason="PyTorch is the accuracy oracle; not installed")
    errs, data, reference = normcore_errors(kind, offset, tier)
    torch_errs = errors(run_torch(torch, kind, *data), reference)
    slack = 1.0 if offset and kind in CENTRED else 1.25
    worse = {k: f"normcore {errs[k]:.2e} vs torch {torch_errs[k]:.2e}" for k in errs
             if not errs[k] <= slack * torch_errs[k]}
    assert not worse, f"{tier.__name__}.{kind} at offset {offset:g} is less accurate than PyTorch: {worse}"


def one_pass_moments(x, axes):
    """The textbook shortcut this test guards against: var = E[x**2] - E[x]**2, in x's dtype."""
    mean = x.mean(axis=axes, keepdims=True)
    var = np.maximum((x * x).mean(axis=axes, keepdims=True) - mean * mean, 0)
    return mean, var, 1.0


@pytest.mark.parametrize("kind", CENTRED)
def test_one_pass_variance_fails_the_offset_bound(kind, monkeypatch):
    """The bound above is tight enough to catch the one-pass variance (and only at an offset)."""
    for module in ("layernorm", "batchnorm", "groupnorm"):
        monkeypatch.setattr(f"normcore.norms.{module}.moments", one_pass_moments)
    errs_plain, _, _ = normcore_errors(kind, 0.0)
    assert_within(errs_plain, bound(kind, 0.0), f"one-pass {kind} at offset 0")  # harmless without offset
    errs, _, _ = normcore_errors(kind, 1e4)
    with pytest.raises(AssertionError):
        assert_within(errs, bound(kind, 1e4), f"one-pass {kind} at offset 1e4")
    assert errs["y"] > 10 * bound(kind, 1e4), f"one-pass error {errs['y']:.2e} should be far above the bound"
