"""MultiheadAttention (cross-attention): gradient checks, PyTorch parity, masks, added keys,
inputs in any memory layout, zero sizes, dtypes, and validation.

Queries come from one sequence (B, Tq, E), keys and values from another (B, Tk, kdim) and
(B, Tk, vdim), Tq != Tk and kdim, vdim != E wherever it can matter. The oracle is
``torch.nn.MultiheadAttention(batch_first=True)`` on its math path (``need_weights=True``),
its weights copied by hand here (not through the bridge). Parity to 1e-10 in float64; gradient
checks to normcore's default 1e-7 with a random upstream gradient.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import normcore as nc
from normcore.layer_cases import perturb_parameters

from norm_tiers import LAYOUTS, arrays_in, in_layout, suite_settings

try:
    import torch
except ImportError:  # the parity tests skip; the rest still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

B, TQ, TK, E, H = 2, 3, 5, 8, 2


def _x(*shape, seed=0):
    return np.random.default_rng([seed, *shape]).standard_normal(shape)


def _mha(seed=0, **kwargs):
    """A MultiheadAttention with every parameter random (biases, bias_k and bias_v too)."""
    m = nc.MultiheadAttention(E, H, rng=seed, **kwargs)
    return perturb_parameters(m, np.random.default_rng(seed + 1))


def _inputs(m, b=B, tq=TQ, tk=TK, seed=1):
    return _x(b, tq, E, seed=seed), _x(b, tk, m.kdim, seed=seed + 1), _x(b, tk, m.vdim, seed=seed + 2)


class WithMasks(nc.Module):
    """Attention with its masks fixed as attributes, so gradcheck sees query, key and value only."""

    def __init__(self, attn, key_padding_mask=None, attn_mask=None):
        self.attn, self.key_padding_mask, self.attn_mask = attn, key_padding_mask, attn_mask

    def forward(self, query, key, value):
        return self.attn(query, key, value, self.key_padding_mask, self.attn_mask)

    def backward(self, dy):
        return self.attn.backward(dy)


# Masks that never mask a whole row: key 0 stays open for every query.
def _kpm(kind, b=B, tk=TK):
    if kind is None:
        return None
    masked = np.zeros((b, tk), dtype=bool)
    masked[-1, -2:] = True  # the last two keys of the last sequence are padding
    masked[0, 2 % tk] = tk > 2
    if kind == "bool":
        return masked
    return np.where(masked, -np.inf, 0.5 * _x(b, tk, seed=3))  # additive, finite biases elsewhere


def _attn_mask(kind, shape, b=B, tq=TQ, tk=TK):
    if kind is None:
        return None
    full = (b, H, tq, tk) if shape == "BHTT" else (tq, tk)
    masked = np.random.default_rng([4, *full]).random(full) < 0.4
    masked[..., 0] = False
    if kind == "bool":
        return masked
    return np.where(masked, -np.inf, _x(*full, seed=5))


CONFIGS = [  # keyword arguments of MultiheadAttention
    {},
    {"bias": False},
    {"kdim": 5, "vdim": 3},
    {"add_bias_kv": True},
    {"add_zero_attn": True},
    {"add_bias_kv": True, "add_zero_attn": True},
    {"bias": False, "add_bias_kv": True, "add_zero_attn": True, "kdim": 6, "vdim": 4},
    {"add_zero_attn": True, "kdim": 3},
    {"causal": True},
    {"causal": True, "add_bias_kv": True, "vdim": 5},
]
CONFIG_IDS = ["-".join(f"{k}={v}" for k, v in c.items()) or "default" for c in CONFIGS]
MASKS = [  # (key padding mask kind, attention mask kind, attention mask shape)
    (None, None, "TT"), ("bool", None, "TT"), ("float", None, "TT"), (None, "bool", "TT"),
    (None, "float", "BHTT"), ("bool", "bool", "BHTT"), ("float", "bool", "TT"), ("bool", "float", "BHTT"),
]
MASK_IDS = [f"kpm:{k}-attn:{a}{'' if a is None else '-' + s}" for k, a, s in MASKS]


# --- gradient checks ---------------------------------------------------------------------------

@pytest.mark.slow  # gradchecks every configuration and mask, seconds each
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("kpm, am, shape", MASKS[::3] + [MASKS[-1]], ids=MASK_IDS[::3] + [MASK_IDS[-1]])
def test_gradcheck_query_key_value_and_every_parameter(config, kpm, am, shape):
    m = _mha(**config)
    report = nc.gradcheck(WithMasks(m, _kpm(kpm), _attn_mask(am, shape)), *_inputs(m))
    assert report.passed, report.table()
    names = [c.name for c in report.checks]
    assert names[:3] == ["x0", "x1", "x2"]
    assert set(names[3:]) == {f"attn.{n}" for n, _ in m.named_parameters()}


def test_gradcheck_with_a_float_key_padding_mask_and_tq_longer_than_tk():
    m = _mha(add_bias_kv=True, kdim=3)
    report = nc.gradcheck(WithMasks(m, _kpm("float", tk=2), None), *_inputs(m, tq=6, tk=2))
    assert report.passed, report.table()


def test_every_gradient_is_checked_against_a_random_upstream_gradient():
    """A wrong backward is caught: a dkey off by a factor fails the check of x1 only."""
    class WrongKey(nc.MultiheadAttention):
        def backward(self, dy):
            dq, dk, dv = super().backward(dy)
            return dq, 1.01 * dk, dv
    m = perturb_parameters(WrongKey(E, H, kdim=5, rng=0), np.random.default_rng(1))
    report = nc.gradcheck(m, *_inputs(m))
    assert not report["x1"].passed and report["x0"].passed and report["x2"].passed


# --- PyTorch parity --------------------------------------------------------------------------

def _torch_twin(m, key_bias_seed=7):
    """torch.nn.MultiheadAttention with m's weights, copied by hand. When m has no key bias,
    torch's in_proj_bias[E:2E] is random: it must change nothing."""
    packed = m.kdim == m.vdim == E
    t = torch.nn.MultiheadAttention(E, H, bias=m.q.bias is not None, add_bias_kv=m.add_bias_kv,
                                    add_zero_attn=m.add_zero_attn, kdim=m.kdim, vdim=m.vdim, batch_first=True,
                                    dtype=torch.float64)
    W = [m.q.weight.data, m.k.weight.data, m.v.weight.data]
    with torch.no_grad():
        if packed:
            t.in_proj_weight.copy_(torch.from_numpy(np.concatenate(W)))
        else:
            for name, w in zip(("q", "k", "v"), W):
                getattr(t, f"{name}_proj_weight").copy_(torch.from_numpy(w))
        t.out_proj.weight.copy_(torch.from_numpy(m.o.weight.data))
        if m.q.bias is not None:
            bk = m.k.bias.data if m.k.bias is not None else _x(E, seed=key_bias_seed)
            t.in_proj_bias.copy_(torch.from_numpy(np.concatenate([m.q.bias.data, bk, m.v.bias.data])))
            t.out_proj.bias.copy_(torch.from_numpy(m.o.bias.data))
        if m.add_bias_kv:
            t.bias_k.copy_(torch.from_numpy(m.bias_k.data))
            t.bias_v.copy_(torch.from_numpy(m.bias_v.data))
    return t


def _torch_grads(m, t):
    """torch's parameter gradients under normcore's names (in_proj cut into q, k, v)."""
    packed = m.kdim == m.vdim == E
    grads = {"o.weight": t.out_proj.weight.grad.numpy()}
    for i, name in enumerate("qkv"):
        grads[f"{name}.weight"] = (t.in_proj_weight.grad[i * E:(i + 1) * E] if packed
                                   else getattr(t, f"{name}_proj_weight").grad).numpy()
        if t.in_proj_bias is not None:
            grads[f"{name}.bias"] = t.in_proj_bias.grad[i * E:(i + 1) * E].numpy()
    if t.in_proj_bias is not None:
        grads["o.bias"] = t.out_proj.bias.grad.numpy()
        if m.k.bias is None:  # softmax ignores it: PyTorch's gradient is zero (or NaN with NaN rows)
            kb = grads.pop("k.bias")
            assert np.max(np.abs(kb), initial=0.0) < 1e-12 or np.isnan(kb).any()
    if m.add_bias_kv:
        grads["bias_k"], grads["bias_v"] = t.bias_k.grad.numpy(), t.bias_v.grad.numpy()
    return grads


def _torch_masks(m, kpm, am, tq, tk):
    """normcore's masks for torch: causal merged into attn_mask, (B, H, Tq, Tk) as (B*H, Tq, Tk),
    one kind when both are given (PyTorch deprecates mixing boolean and floating)."""
    if m.causal:
        future = np.triu(np.ones((tq, tk), dtype=bool), k=1)
        am = future if am is None else (am | future if am.dtype == bool else am + np.where(future, -np.inf, 0.0))
    if am is not None and am.ndim == 4:
        am = am.reshape(-1, tq, tk)
    if kpm is not None and am is not None and (kpm.dtype == bool) != (am.dtype == bool):
        kpm, am = (np.where(a, -np.inf, 0.0) if a.dtype == bool else a for a in (kpm, am))
    return (None if a is None else torch.from_numpy(a) for a in (kpm, am))


def _close(a, b, what):
    """Equal to 1e-10 relative to the array's scale, NaN exactly where the other is NaN."""
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: NaN in different places")
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=1.0))
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10 * scale, equal_nan=True, err_msg=what)


def _assert_matches_torch(m, kpm=None, am=None, b=B, tq=TQ, tk=TK):
    query, key, value = _inputs(m, b, tq, tk)
    dy = _x(b, tq, E, seed=9)
    m.zero_grad()
    y = m(query, key, value, kpm, am)
    dq, dk, dv = m.backward(dy)
    t = _torch_twin(m)
    tq_, tk_, tv_ = (torch.tensor(a, requires_grad=True) for a in (query, key, value))
    tkpm, tam = _torch_masks(m, kpm, am, tq, tk)
    ty, _ = t(tq_, tk_, tv_, key_padding_mask=tkpm, attn_mask=tam, need_weights=True)
    ty.backward(torch.from_numpy(dy))
    _close(y, ty.detach().numpy(), "output")
    for ours, theirs, what in ((dq, tq_, "dquery"), (dk, tk_, "dkey"), (dv, tv_, "dvalue")):
        _close(ours, theirs.grad.numpy(), what)
    grads = _torch_grads(m, t)
    assert set(grads) == {n for n, _ in m.named_parameters()}
    for name, p in m.named_parameters():
        _close(p.grad, grads[name], f"{name} grad")


@needs_torch
@pytest.mark.parametrize("config", CONFIGS, ids=CONFIG_IDS)
@pytest.mark.parametrize("kpm, am, shape", MASKS, ids=MASK_IDS)
def test_matches_torch_multihead_attention(config, kpm, am, shape):
    _assert_matches_torch(_mha(**config), _kpm(kpm), _attn_mask(am, shape))


@needs_torch
@pytest.mark.parametrize("tq, tk", [(1, 7), (6, 2), (4, 4)])
@pytest.mark.parametrize("config", [{}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3}, {"causal": True}],
                         ids=["default", "added keys", "causal"])
def test_matches_torch_for_other_lengths(config, tq, tk):
    _assert_matches_torch(_mha(**config), _kpm("bool", tk=tk), _attn_mask("float", "BHTT", tq=tq, tk=tk),
                          tq=tq, tk=tk)


@needs_torch
@pytest.mark.parametrize("config", [{}, {"add_bias_kv": True}, {"add_zero_attn": True, "vdim": 3}],
                         ids=["default", "bias_kv", "zero_attn"])
def test_fully_masked_rows_match_torch(config):
    """Every key of sequence 1 padding, query 2 masked from every key: NaN rows (output and
    gradients) without added keys, as PyTorch's math path; the added keys are never masked, so
    with them no row is NaN."""
    kpm = np.zeros((B, TK), dtype=bool)
    kpm[1] = True
    am = np.zeros((TQ, TK), dtype=bool)
    am[2] = True
    m = _mha(**config)
    _assert_matches_torch(m, kpm, am)
    y = m(*_inputs(m), kpm, am)
    if config.get("add_bias_kv") or config.get("add_zero_attn"):
        assert np.isfinite(y).all()
    else:
        assert np.isnan(y[1]).all() and np.isnan(y[0, 2]).all() and np.isfinite(y[0, [0, 1]]).all()


@needs_torch
@pytest.mark.parametrize("b, tq, tk", [(0, TQ, TK), (B, 0, TK), (B, TQ, 0)])
@pytest.mark.parametrize("config", [{}, {"add_bias_kv": True, "add_zero_attn": True}],
                         ids=["default", "added keys"])
def test_zero_sizes_match_torch(config, b, tq, tk):
    """No sequences, no queries, or no keys at all (then a query mixes nothing: A = 0, y = bo)."""
    _assert_matches_torch(_mha(**config), b=b, tq=tq, tk=tk)


@pytest.mark.parametrize("b, tq, tk", [(0, TQ, TK), (B, 0, TK), (B, TQ, 0), (0, 0, 0)])
@pytest.mark.parametrize("config", [{}, {"add_bias_kv": True, "add_zero_attn": True, "kdim": 3, "causal": True}],
                         ids=["default", "everything"])
def test_zero_size_inputs_with_masks_give_empty_results(config, b, tq, tk):
    m = _mha(**config)
    y = m(*_inputs(m, b, tq, tk), np.zeros((b, tk), dtype=bool), np.zeros((tq, tk)))
    assert y.shape == (b, tq, E) and np.isfinite(y).all()
    dq, dk, dv = m.backward(_x(b, tq, E, seed=4))
    assert (dq.shape, dk.shape, dv.shape) == ((b, tq, E), (b, tk, m.kdim), (b, tk, m.vdim))
    if tk == 0 and not (m.add_bias_kv or m.add_zero_attn):
        np.testing.assert_array_equal(y, np.broadcast_to(m.o.bias.data, y.shape))  # nothing to attend to


# --- self-attention is cross-attention with query = key = value ------------------------------

@pytest.mark.parametrize("causal", [False, True])
def test_self_attention_is_cross_attention_with_one_input_three_times(causal):
    x, dy = _x(B, TK, E, seed=1), _x(B, TK, E, seed=2)
    kpm, am = _kpm("bool"), _attn_mask("float", "BHTT", tq=TK)
    cross = nc.MultiheadAttention(E, H, causal=causal, rng=0)
    self_ = nc.MultiheadSelfAttention(E, H, causal=causal, rng=0)
    assert list(cross.state_dict()) == list(self_.state_dict())  # no key bias on either
    for key, value in cross.state_dict().items():
        np.testing.assert_array_equal(self_.state_dict()[key], value)
    np.testing.assert_array_equal(self_(x, kpm, am), cross(x, x, x, kpm, am))
    np.testing.assert_array_equal(self_.backward(dy), sum(cross.backward(dy)))
    for (name, p), (_, p2) in zip(self_.named_parameters(), cross.named_parameters()):
        np.testing.assert_array_equal(p.grad, p2.grad, err_msg=name)


def test_the_self_attention_classes_keep_their_api_and_state_dict():
    msa = nc.MultiheadSelfAttention(8, 2, True, False, "torch", 0.5, 0, np.float32)
    assert (msa.d_model, msa.n_heads, msa.head_dim, msa.causal) == (8, 2, 4, True)
    assert list(msa.state_dict()) == ["q.weight", "k.weight", "v.weight", "o.weight"]
    csa = nc.CausalSelfAttention(8, 2, rng=0)
    assert csa.causal and list(csa.state_dict()) == ["q.weight", "q.bias", "k.weight", "v.weight", "v.bias",
                                                     "o.weight", "o.bias"]
    assert isinstance(nc.nn.MultiheadAttention(4, 2), nc.Module) and nc.MultiheadAttention is nc.nn.MultiheadAttention


# --- the key bias ----------------------------------------------------------------------------

def test_the_key_projection_has_a_bias_exactly_when_added_keys_make_it_matter():
    for bias in (True, False):
        for bias_kv in (True, False):
            for zero_attn in (True, False):
                m = nc.MultiheadAttention(E, H, bias=bias, add_bias_kv=bias_kv, add_zero_attn=zero_attn)
                assert (m.k.bias is not None) == (bias and (bias_kv or zero_attn))
                assert (m.bias_k is not None) == (m.bias_v is not None) == bias_kv


@pytest.mark.parametrize("config, matters", [({}, False), ({"add_zero_attn": True}, True),
                                             ({"add_bias_kv": True}, True)])
def test_a_key_bias_changes_the_output_only_when_keys_are_added(config, matters):
    m = _mha(**config)
    inputs = _inputs(m)
    y = m(*inputs, _kpm("bool"))
    m.k.bias = nc.Parameter(_x(E, seed=11))
    y2 = m(*inputs, _kpm("bool"))
    assert not np.allclose(y2, y, rtol=1e-8, atol=1e-8) if matters else np.allclose(y2, y, rtol=1e-12, atol=1e-12)


def test_bias_kv_is_one_more_key_and_zero_attn_a_zero_key():
    """Without torch: the layer with add_bias_kv and add_zero_attn equals a plain layer given
    two more key/value positions by hand, whose projections are bias_k, bias_v (without the
    projection biases) and zero. Three indicator channels do it: kdim = vdim = E + 3 with
    columns (bias-kv key, zero key, real key)."""
    m = _mha(add_bias_kv=True, add_zero_attn=True)
    plain = nc.MultiheadAttention(E, H, kdim=E + 3, vdim=E + 3, rng=0)  # k without a bias: none is needed
    plain.q.load_state_dict(m.q.state_dict())
    plain.o.load_state_dict(m.o.state_dict())
    bk, bv = m.k.bias.data, m.v.bias.data
    kw = np.concatenate([m.k.weight.data, m.bias_k.data[0, 0][:, None], np.zeros((E, 1)), bk[:, None]], axis=1)
    vw = np.concatenate([m.v.weight.data, (m.bias_v.data[0, 0] - bv)[:, None], -bv[:, None], np.zeros((E, 1))],
                        axis=1)
    plain.k.load_state_dict({"weight": kw})
    plain.v.load_state_dict({"weight": vw, "bias": bv})
    query, key, value = _inputs(m)

    def extended(a):  # (B, Tk, E) -> (B, Tk + 2, E + 3): the real keys, then the bias-kv key, the zero key
        real = np.concatenate([a, np.zeros((B, TK, 2)), np.ones((B, TK, 1))], axis=-1)
        added = np.tile(np.concatenate([np.zeros((2, E)), np.eye(3)[:2]], axis=1), (B, 1, 1))
        return np.concatenate([real, added], axis=1)
    kpm = _kpm("bool")
    kpm_plain = np.concatenate([kpm, np.zeros((B, 2), dtype=bool)], axis=1)  # the added keys: never masked
    np.testing.assert_allclose(m(query, key, value, kpm), plain(query, extended(key), extended(value), kpm_plain),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("e, layers", [(4, 256), (64, 16)])
def test_bias_k_and_bias_v_are_drawn_as_torchs_xavier_normal(e, layers):
    """torch's MultiheadAttention draws bias_k and bias_v of shape (1, 1, E) with xavier_normal_:
    fan_in = fan_out = E, so normal with mean 0 and std sqrt(2 / (E + E)) = sqrt(1 / E),
    independently of each other. Pooled over seeded layers (2048 values), the variance is 1 / E
    to 12% (4 standard errors), the mean 0, and values beyond 2 std (which a uniform draw of
    that std never reaches) are there."""
    drawn = [nc.MultiheadAttention(e, 2, add_bias_kv=True, rng=seed) for seed in range(layers)]
    assert all(m.bias_k.shape == m.bias_v.shape == (1, 1, e) for m in drawn)
    assert not any(np.array_equal(m.bias_k.data, m.bias_v.data) for m in drawn)
    z = np.concatenate([np.r_[m.bias_k.data.ravel(), m.bias_v.data.ravel()] for m in drawn]) * np.sqrt(e)
    assert z.size == 2048 and abs(z.var() - 1) < 0.12 and abs(z.mean()) < 4 / np.sqrt(z.size)
    assert (np.abs(z) > 2).mean() > 0.02  # normal: 4.6%; uniform with std 1: none beyond sqrt(3)


@needs_torch
def test_torchs_bias_k_and_bias_v_have_std_sqrt_1_over_e():
    """The std the test above holds normcore to is torch's: the same pooled variance, 1 / E."""
    e = 64
    torch.manual_seed(0)
    drawn = [torch.nn.MultiheadAttention(e, 2, add_bias_kv=True) for _ in range(16)]
    z = torch.cat([torch.cat([m.bias_k.detach().ravel(), m.bias_v.detach().ravel()]) for m in drawn])
    assert abs(float(z.var()) * e - 1) < 0.12


# --- flags, inputs, errors --------------------------------------------------------------------

@pytest.mark.parametrize("make, name", [
    (lambda: nc.MultiheadAttention(E, H, causal="False"), "causal"),
    (lambda: nc.MultiheadAttention(E, H, bias="no"), "bias"),
    (lambda: nc.MultiheadAttention(E, H, add_bias_kv=1), "add_bias_kv"),
    (lambda: nc.MultiheadAttention(E, H, add_zero_attn=None), "add_zero_attn"),
    (lambda: nc.MultiheadSelfAttention(E, H, causal="False"), "causal"),
    (lambda: nc.MultiheadSelfAttention(E, H, bias="False"), "bias"),
    (lambda: nc.CausalSelfAttention(E, H, bias=0), "bias"),
    (lambda: nc.TransformerBlock(E, H, causal="False"), "causal"),
    (lambda: nc.TransformerBlock(E, H, bias="True"), "bias"),
])
def test_a_flag_that_is_not_a_bool_is_refused(make, name):
    """causal="False" used to build a causal layer: a non-empty string is truthy."""
    with pytest.raises(TypeError, match=f"{name} must be True or False"):
        make()


@pytest.mark.parametrize("make, error, words", [
    (lambda: nc.MultiheadAttention(7, 2), ValueError, "embed_dim (7) must be divisible by num_heads (2)"),
    (lambda: nc.MultiheadAttention(8.0, 2), TypeError, "embed_dim must be an int"),
    (lambda: nc.MultiheadAttention(8, 0), ValueError, "num_heads must be a positive int"),
    (lambda: nc.MultiheadAttention(8, 2, kdim=0), ValueError, "kdim must be a positive int"),
    (lambda: nc.MultiheadAttention(8, 2, vdim=2.5), TypeError, "vdim must be an int"),
    (lambda: nc.MultiheadAttention(8, 2, init="he"), ValueError, "init must be one of"),
])
def test_bad_arguments_say_what_was_expected(make, error, words):
    with pytest.raises(error) as info:
        make()
    assert words in str(info.value)


Q, K, V = _x(B, TQ, E, seed=1), _x(B, TK, 5, seed=2), _x(B, TK, 3, seed=3)


@pytest.mark.parametrize("args, kwargs, error, words", [
    ((Q[..., :4], K, V), {}, ValueError, "query of shape (B, Tq, 8)"),
    ((Q, K[..., :4], V), {}, ValueError, "key of shape (B, Tk, 5)"),
    ((Q, K, V[..., :2]), {}, ValueError, "value of shape (B, Tk, 3)"),
    ((Q[0], K, V), {}, ValueError, "key of shape (Tk, 5) (all three unbatched, as the query), got (2, 5, 5)"),
    ((Q[None], K, V), {}, ValueError, "query of shape (B, Tq, 8) (batch_first=True), got (1, 2, 3, 8)"),
    ((Q, K, V[:, :4]), {}, ValueError, "one B and one Tk"),
    ((Q[:1], K, V), {}, ValueError, "one B and one Tk"),
    ((Q, K.astype(np.float32), V), {}, TypeError, "query, key and value of one dtype"),
    ((Q, K.astype(int), V), {}, TypeError, "expects a floating-point key"),
    ((Q, "key", V), {}, TypeError, "key"),
    ((Q, K, V), {"key_padding_mask": np.zeros((B, TQ), dtype=bool)}, ValueError,
     "key_padding_mask must have shape (2, 5) for B = 2 sequences, Tq = 3 queries, Tk = 5 keys"),
    ((Q, K, V), {"attn_mask": np.zeros((TK, TQ), dtype=bool)}, ValueError, "(3, 5) or (4, 3, 5) or (2, 2, 3, 5)"),
    ((Q, K, V), {"attn_mask": np.zeros((TQ, TK + 2), dtype=bool)}, ValueError, "attn_mask must have shape (3, 5)"),
    ((Q, K, V), {"attn_mask": np.zeros((TQ, TK), dtype=np.int64)}, TypeError, "boolean (True = not allowed"),
    ((Q, K, V), {"key_padding_mask": [[0, 1], [1]]}, TypeError, "key_padding_mask"),
])
def test_bad_inputs_raise_and_change_nothing(args, kwargs, error, words):
    m = _mha(kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)
    dy = _x(B, TQ, E, seed=4)
    m(Q, K, V)
    with pytest.raises(error) as info:
        m(*args, **kwargs)
    assert words in str(info.value)
    grads = m.backward(dy)  # still the backward of the first forward
    m2 = _mha(kdim=5, vdim=3, add_bias_kv=True, add_zero_attn=True)
    m2(Q, K, V)
    for a, b in zip(grads, m2.backward(dy)):
        np.testing.assert_array_equal(a, b)


def test_backward_checks_the_upstream_gradient_and_needs_a_forward():
    m = _mha()
    with pytest.raises(RuntimeError, match="before forward"):
        m.backward(_x(B, TQ, E))
    m(*_inputs(m))
    with pytest.raises(ValueError, match=r"upstream gradient of the output's shape \(2, 3, 8\)"):
        m.backward(_x(B, TK, E))


def test_nothing_cached_is_shared_with_the_caller():
    m = _mha(add_bias_kv=True, kdim=5)
    query, key, value = _inputs(m)
    kpm, am = _kpm("bool"), _attn_mask("float", "TT")
    y = m(query, key, value, kpm, am)
    kept = arrays_in(m)
    for given_ in (query, key, value, kpm, am, y):
        assert not any(np.shares_memory(given_, a) for a in kept)
    expected = _mha(add_bias_kv=True, kdim=5)
    expected(query.copy(), key.copy(), value.copy(), kpm.copy(), am.copy())
    for a in (query, key, value, y, am):
        a[...] = 7.0  # the caller overwrites everything it gave and got
    kpm[...] = True
    dy = _x(B, TQ, E, seed=4)
    for a, b in zip(m.backward(dy), expected.backward(dy)):
        np.testing.assert_array_equal(a, b)


@given(layouts=st.tuples(*[st.sampled_from(LAYOUTS)] * 4), seed=st.integers(0, 2**16))
@suite_settings(25)
def test_any_memory_layout_gives_the_same_numbers(layouts, seed):
    """C, Fortran, transposed, stepped, reversed, broadcast and read-only query, key, value and
    attention mask: the output and every gradient equal those of contiguous copies."""
    rng = np.random.default_rng(seed)
    query, key, value = _x(B, TQ, E, seed=seed), _x(B, TK, 5, seed=seed + 1), _x(B, TK, 3, seed=seed + 2)
    am = _attn_mask("float", "BHTT")
    laid = [in_layout(a, layout, rng, free_axes=(0, 1)) for a, layout in zip((query, key, value, am), layouts)]
    contiguous = [np.ascontiguousarray(a) for a in laid]  # the same values (broadcast repeats some)
    dy = _x(B, TQ, E, seed=4)
    expected = _mha(kdim=5, vdim=3, add_zero_attn=True)
    y_expected = expected(*contiguous[:3], None, contiguous[3])
    grads_expected = expected.backward(dy)
    m = _mha(kdim=5, vdim=3, add_zero_attn=True)  # equal up to BLAS's rounding, which may follow the layout
    np.testing.assert_allclose(m(*laid[:3], None, laid[3]), y_expected, rtol=1e-12, atol=1e-12)
    for a, b in zip(m.backward(dy), grads_expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    for (name, p), (_, p2) in zip(m.named_parameters(), expected.named_parameters()):
        np.testing.assert_allclose(p.grad, p2.grad, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-2)])
def test_float32_and_float16_follow_float64(dtype, tol):
    """The output and the gradients keep the input's dtype; float16 is computed in float32."""
    m64 = _mha(add_bias_kv=True, add_zero_attn=True, kdim=5)
    m = _mha(add_bias_kv=True, add_zero_attn=True, kdim=5).to(dtype)
    inputs = [a.astype(dtype) for a in _inputs(m64)]
    kpm, am = _kpm("bool"), _attn_mask("float", "TT")  # a float64 mask with float16 inputs: fine
    y = m(*inputs, kpm, am)
    grads = m.backward(_x(B, TQ, E, seed=4).astype(dtype))
    y64 = m64(*[a.astype(np.float64) for a in inputs], kpm, am)
    grads64 = m64.backward(_x(B, TQ, E, seed=4).astype(dtype).astype(np.float64))
    assert y.dtype == dtype and all(g.dtype == dtype for g in grads)
    assert all(p.grad.dtype == dtype for p in m.parameters())
    np.testing.assert_allclose(y, y64, rtol=tol, atol=tol * np.abs(y64).max())
    for g, g64 in zip(grads, grads64):
        np.testing.assert_allclose(g, g64, rtol=tol, atol=tol * np.abs(g64).max())
    for (name, p), (_, p64) in zip(m.named_parameters(), m64.named_parameters()):
        np.testing.assert_allclose(p.grad, p64.grad, rtol=tol, atol=tol * np.abs(p64.grad).max(), err_msg=name)


def test_float16_is_computed_in_float32():
    m = _mha().to(np.float16)
    query, key, value = (a.astype(np.float16) for a in _inputs(m))
    y = m(query, key, value)
    q, k, v, P, in_dtype, _slope = m._cache
    assert in_dtype == np.float16 and q.dtype == k.dtype == v.dtype == P.dtype == np.float32
    m32 = _mha().to(np.float32)
    for (_, p), (_, p32) in zip(m.named_parameters(), m32.named_parameters()):
        p32.data[...] = p.data.astype(np.float32)
    np.testing.assert_array_equal(y, m32(*(a.astype(np.float32) for a in (query, key, value))).astype(np.float16))


def test_works_without_torch():
    import subprocess
    import sys
    code = ("import sys; sys.modules['torch'] = None\n"
            "import numpy as np, normcore as nc\n"
            "m = nc.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, rng=0)\n"
            "y = m(np.ones((1, 2, 4)), np.ones((1, 5, 3)), np.ones((1, 5, 4)))\n"
            "print(len(m.backward(np.ones_like(y))))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "3", result.stderr
