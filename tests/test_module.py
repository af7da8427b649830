"""The autograd-free stack: Parameter, Module bookkeeping, Sequential, state dicts."""

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import randomize_parameters


class Scale(nc.Module):
    """y = x * w, to test the stack without a norm in the way."""

    def __init__(self, n):
        self.w = nc.Parameter(np.arange(1.0, n + 1))

    def forward(self, x):
        self._cache = x
        return x * self.w.data

    def backward(self, dy):
        x = self._cached()
        self.w.grad += (dy * x).sum(axis=0)
        return dy * self.w.data


def test_parameter_grad_starts_at_zero_and_matches_shape_and_dtype():
    p = nc.Parameter(np.ones((2, 3)), dtype=np.float32)
    assert p.grad.shape == (2, 3) and p.grad.dtype == np.float32 and not p.grad.any()
    with pytest.raises(TypeError, match="floating point"):
        nc.Parameter(np.arange(3), dtype=np.int64)


def test_parameters_and_named_parameters_in_registration_order():
    seq = nc.Sequential(nc.LayerNorm(3), Scale(3), nc.BatchNorm1d(3))
    names = [n for n, _ in seq.named_parameters()]
    assert names == ["0.weight", "0.bias", "1.w", "2.weight", "2.bias"]
    assert len(seq.parameters()) == 5


def test_shared_parameter_is_listed_once():
    a, b = Scale(3), Scale(3)
    b.w = a.w
    seq = nc.Sequential(a, b)
    assert [n for n, _ in seq.named_parameters()] == ["0.w"]


def test_sequential_backward_runs_children_in_reverse_and_accumulates():
    rng = np.random.default_rng(0)
    seq = nc.Sequential(Scale(4), nc.LayerNorm(4), Scale(4))
    for p in seq.parameters():
        p.data[...] = rng.standard_normal(p.shape)
    x = rng.standard_normal((3, 4))
    report = nc.gradcheck(seq, x)
    assert report.passed, report
    # A second backward without zero_grad doubles every parameter gradient.
    seq.zero_grad()
    seq(x)
    dy = rng.standard_normal((3, 4))
    seq.backward(dy)
    once = [p.grad.copy() for p in seq.parameters()]
    seq.backward(dy)
    for g1, p in zip(once, seq.parameters()):
        np.testing.assert_allclose(p.grad, 2 * g1)
    seq.zero_grad()
    assert all(not p.grad.any() for p in seq.parameters())


def test_parameter_used_twice_gets_both_shares():
    a, b = Scale(3), Scale(3)
    b.w = a.w  # one Parameter in two modules (weight tying)
    seq = nc.Sequential(a, b)  # y = x * w * w, dy/dw = 2 x w
    x = np.ones((1, 3))
    seq(x)
    seq.backward(np.ones((1, 3)))
    np.testing.assert_allclose(a.w.grad, 2 * a.w.data)


def test_train_and_eval_recurse_and_return_the_module():
    seq = nc.Sequential(nc.BatchNorm1d(2), nc.Sequential(nc.Dropout(0.5)))
    assert seq.eval() is seq
    assert all(not m.training for _, m in seq.named_modules())
    assert seq.train() is seq
    assert all(m.training for _, m in seq.named_modules())


def test_state_dict_keys_and_order_follow_pytorch():
    bn = nc.BatchNorm1d(3)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert list(nc.BatchNorm1d(3, affine=False).state_dict()) == ["running_mean", "running_var",
                                                                  "num_batches_tracked"]
    assert list(nc.BatchNorm1d(3, track_running_stats=False).state_dict()) == ["weight", "bias"]
    assert list(nc.LayerNorm(3, bias=False).state_dict()) == ["weight"]
    assert list(nc.RMSNorm(3).state_dict()) == ["weight"]
    assert nc.Dropout().state_dict() == {} and nc.InstanceNorm1d(3).state_dict() == {}
    sd = nc.Sequential(nc.LayerNorm(2), nc.GroupNorm(1, 2)).state_dict()
    assert list(sd) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    nbt = bn.state_dict()["num_batches_tracked"]
    assert nbt.shape == () and nbt.dtype == np.int64


def test_state_dict_round_trip_and_copies():
    rng = np.random.default_rng(1)
    bn = nc.BatchNorm1d(3)
    bn(rng.standard_normal((5, 3)))
    sd = bn.state_dict()
    sd["running_mean"][0] = 123.0  # a copy: the layer is not changed
    assert bn.running_mean[0] != 123.0
    other = nc.BatchNorm1d(3).load_state_dict(sd)
    assert other.running_mean[0] == 123.0
    np.testing.assert_array_equal(other.running_var, bn.running_var)
    assert int(other.num_batches_tracked) == 1


@pytest.mark.parametrize("change, error, message", [
    (lambda sd: sd.pop("bias"), KeyError, "missing keys \\['bias'\\]"),
    (lambda sd: sd.update(extra=np.zeros(1)), KeyError, "unexpected keys \\['extra'\\]"),
    (lambda sd: sd.update(running_var=np.ones(4)), ValueError, "'running_var' expected shape \\(3,\\), got \\(4,\\)"),
])
def test_load_state_dict_rejects_bad_entries_and_loads_nothing(change, error, message):
    bn = nc.BatchNorm1d(3)
    sd = {k: v + 7 if k != "num_batches_tracked" else v + 1 for k, v in bn.state_dict().items()}
    change(sd)
    before = bn.state_dict()
    with pytest.raises(error, match=message):
        bn.load_state_dict(sd)
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


def test_backward_before_forward_is_a_clear_error():
    for layer in [nc.LayerNorm(3), nc.RMSNorm(3), nc.BatchNorm1d(3), nc.GroupNorm(1, 3), nc.Dropout(),
                  nc.InstanceNorm1d(3), nc.Sequential(nc.LayerNorm(3))]:
        with pytest.raises(RuntimeError, match="before forward"):
            layer.backward(np.ones((2, 3, 4)))


def test_repr_reads_like_pytorch():
    assert repr(nc.LayerNorm(4)) == "LayerNorm((4,), eps=1e-05, elementwise_affine=True)"
    assert "(0): BatchNorm1d(3" in repr(nc.Sequential(nc.BatchNorm1d(3)))


def test_gradcheck_leaves_the_module_alone_and_checks_float32_layers_in_float64():
    rng = np.random.default_rng(3)
    bn = nc.BatchNorm1d(3, dtype=np.float32)
    randomize_parameters(bn, rng)
    before = bn.state_dict()
    report = nc.gradcheck(bn, rng.standard_normal((4, 3)).astype(np.float32))
    assert report.passed, report
    assert bn.gamma.data.dtype == np.float32 and int(bn.num_batches_tracked) == 0
    for k, v in bn.state_dict().items():
        np.testing.assert_array_equal(v, before[k])


def test_gradcheck_upstream_gradient_differs_from_an_input_drawn_with_the_same_seed():
    # With dy == x a LayerNorm with gamma = 1 has a nearly vanishing input gradient.
    x = np.random.default_rng(0).standard_normal((3, 4))
    report = nc.gradcheck(nc.LayerNorm(4), x)
    assert report.passed, report


def _tiny_pre_ln_case(seed):
    from normcore.layer_cases import all_cases

    return next(c for c in all_cases(seed) if c.label == "TinyTransformer 2 blocks pre")


def test_a_right_gradient_tiny_next_to_the_loss_passes_at_the_noise_floor_and_says_so():
    # At seed 2 block 2's query weights have a gradient about 1e-2 while sum|y * dy| is 75: the
    # central differences are noisy by ~eps * 75 / h ~ 2e-8, a relative error of ~5e-7 > tol.
    case = _tiny_pre_ln_case(2)
    report = nc.gradcheck(case.module, *case.inputs, seed=2)
    floor = [c for c in report.checks if c.at_noise_floor]
    assert report.passed and floor, report
    assert {c.name for c in floor} <= {"blocks.1.attn.q.weight", "blocks.1.attn.q.bias", "blocks.1.attn.k.weight"}
    assert all(c.rel_error > report.tol and c.verdict == "pass*" for c in floor)
    assert "rounding noise" in report.table()


def test_a_wrong_gradient_of_a_tensor_at_the_noise_floor_still_fails():
    case = _tiny_pre_ln_case(2)
    q = case.module.blocks[1].attn.q
    backward = type(q).backward

    def off_by_a_thousandth(self, dy):  # the weight's gradient 0.1% too large
        before = self.weight.grad.copy()
        dx = backward(self, dy)
        self.weight.grad[...] = before + 1.001 * (self.weight.grad - before)
        return dx

    q.backward = off_by_a_thousandth.__get__(q)
    check = nc.gradcheck(case.module, *case.inputs, seed=2)["blocks.1.attn.q.weight"]
    assert not check.passed and not check.at_noise_floor and check.verdict == "FAIL"


def test_to_casts_floating_parameters_gradients_and_buffers_in_place():
    bn = nc.BatchNorm1d(3)
    bn(np.random.default_rng(0).standard_normal((4, 3)))
    assert bn.to(np.float32) is bn
    assert bn.weight.data.dtype == bn.weight.grad.dtype == np.float32
    assert bn.running_mean.dtype == bn.running_var.dtype == np.float32
    assert np.issubdtype(bn.num_batches_tracked.dtype, np.integer)  # not a float: unchanged
    assert int(bn.num_batches_tracked) == 1
    assert all(v.dtype in (np.float32, np.int64) for v in bn.state_dict().values())



def test_to_none_changes_nothing_and_returns_the_module():
    """As torch's ``module.to(None)``; NumPy alone reads np.dtype(None) as float64."""
    bn = nc.BatchNorm1d(3, dtype=np.float32)
    bn(np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32))
    before = bn.state_dict()
    assert bn.to(None) is bn
    assert bn.weight.grad.dtype == np.float32
    after = bn.state_dict()
    assert list(after) == list(before)
    assert all(after[k].dtype == v.dtype and np.array_equal(after[k], v) for k, v in before.items())

def test_cache_nbytes_counts_what_forward_kept():
    ln = nc.LayerNorm(6)
    assert ln.cache_nbytes() is None
    x = np.random.default_rng(1).standard_normal((4, 6))
    ln(x)
    kept = ln.cache_nbytes()
    assert x.nbytes <= kept <= 2 * x.nbytes  # x_hat (4, 6) and the per-row statistics


def test_cache_nbytes_of_a_norm_alone_is_its_own_cache():
    ln = nc.LayerNorm(3)
    ln(np.ones((5, 3)))
    assert ln.cache_nbytes() == 5 * 3 * 8 + 5 * 8  # x_hat (5, 3) and rstd (5, 1), float64


def test_cache_nbytes_of_a_sequential_counts_its_children():
    seq = nc.Sequential(nc.Linear(4, 3, rng=0), nc.LayerNorm(3))
    assert seq.cache_nbytes() is None
    seq(np.ones((5, 4)))
    # Linear keeps its input (5, 4); LayerNorm keeps x_hat (5, 3) and rstd (5, 1), float64
    assert seq.cache_nbytes() == (5 * 4 + 5 * 3 + 5) * 8
    assert seq.cache_nbytes() == seq[0].cache_nbytes() + seq[1].cache_nbytes()


def test_cache_nbytes_of_attention_includes_the_q_k_v_o_projections():
    B, T, C, H = 2, 5, 8, 2
    attn = nc.MultiheadSelfAttention(C, H)
    assert attn.cache_nbytes() is None
    attn(np.random.default_rng(0).standard_normal((B, T, C)))
    own = 3 * B * T * C + B * H * T * T  # q, k, v (B, H, T, D) and the attention weights (B, H, T, T)
    projections = 4 * B * T * C  # the input each of q, k, v, o keeps, (B, T, C)
    assert attn.cache_nbytes() == (own + projections) * 8


@pytest.mark.parametrize("make, x", [
    (lambda: nc.TransformerBlock(8, 2), np.random.default_rng(0).standard_normal((2, 5, 8))),
    (lambda: nc.TinyTransformer(11, 8, 2, 2, 5, rng=0), np.arange(10).reshape(2, 5)),
], ids=["TransformerBlock", "TinyTransformer"])
def test_cache_nbytes_of_a_model_is_the_sum_over_its_children(make, x):
    model = make()
    assert model.cache_nbytes() is None
    model(x)
    children = [child.cache_nbytes() for child in model.children()]
    # no array is kept by two children, and the model itself keeps shapes and dtypes only
    assert model.cache_nbytes() == sum(c for c in children if c is not None) > 0


def test_cache_nbytes_counts_an_array_kept_twice_once():
    ln = nc.LayerNorm(3)
    twice = nc.Sequential(ln, ln)  # one layer, reached by two names
    twice(np.ones((5, 3)))
    assert twice.cache_nbytes() == ln.cache_nbytes() == (5 * 3 + 5) * 8
    a = np.zeros(10)
    module = nc.Module()
    module._cache = (a, [a, {"again": a}], a.dtype)
    assert module.cache_nbytes() == a.nbytes


@pytest.mark.parametrize("dtype, error", [(np.int64, ValueError), ("not a dtype", TypeError)])
def test_to_refuses_a_dtype_that_is_not_floating_and_changes_nothing(dtype, error):
    bn = nc.BatchNorm1d(3)
    before = bn.state_dict()
    with pytest.raises(error, match="BatchNorm1d.to expected"):
        bn.to(dtype)
    after = bn.state_dict()
    assert all(after[k].dtype == v.dtype and np.array_equal(after[k], v) for k, v in before.items())
