"""MultiheadSelfAttention with masks: gradient checks, PyTorch parity, validation.

Convention (``torch.nn.MultiheadAttention``'s): a boolean mask is True where attending is not
allowed; a floating mask is added to the scores. A query row whose every key is masked out
gives NaN, as on PyTorch's math path (``need_weights=True``); the oracle below uses that path.
Everything runs in float64; parity is to 1e-9, gradient checks to normcore's default 1e-7.
"""

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import perturb_parameters

try:
    import torch
except ImportError:  # the parity tests skip; the rest still run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch (the oracle) is not installed")

B, T, C, H = 2, 5, 12, 3


def _x(*shape, seed=0):
    return np.random.default_rng([seed, *shape]).standard_normal(shape)


def _attention(causal=False, bias=True, seed=0):
    """A MultiheadSelfAttention with every parameter random (biases too)."""
    m = nc.MultiheadSelfAttention(C, H, causal=causal, bias=bias, rng=seed)
    return perturb_parameters(m, np.random.default_rng(seed + 1))


# Masks with no fully masked row: key 0 is never masked out, and causal attention allows it too.
def _kpm(kind):
    if kind is None:
        return None
    masked = np.zeros((B, T), dtype=bool)
    masked[1, -2:] = True  # the last two tokens of sequence 1 are padding
    masked[0, 2] = True
    if kind == "bool":
        return masked
    return np.where(masked, -np.inf, 0.5 * _x(B, T, seed=3))  # additive, finite biases elsewhere


def _attn_mask(kind, shape):
    if kind is None:
        return None
    full = (B, H, T, T) if shape == "BHTT" else (T, T)
    masked = np.random.default_rng([4, *full]).random(full) < 0.4
    masked[..., 0] = False  # every query keeps key 0
    if kind == "bool":
        return masked
    return np.where(masked, -np.inf, _x(*full, seed=5))


class WithMasks(nc.Module):
    """Attention with its masks fixed as attributes, so gradcheck sees one input, x."""

    def __init__(self, attn, key_padding_mask=None, attn_mask=None):
        self.attn, self.key_padding_mask, self.attn_mask = attn, key_padding_mask, attn_mask

    def forward(self, x):
        return self.attn(x, self.key_padding_mask, self.attn_mask)

    def backward(self, dy):
        return self.attn.backward(dy)


def _normcore(m, x, kpm, am, dy):
    m.zero_grad()
    y = m(x, kpm, am)
    dx = m.backward(dy)
    grads = {n: p.grad.copy() for n, p in m.named_parameters()}
    return y, dx, grads


def _torch_mask(mask, causal):
    """normcore's masks as one attn_mask for torch.nn.MultiheadAttention (3-D: (B*H, T, T))."""
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    if causal:
        if mask is None:
            mask = future
        elif mask.dtype == bool:
            mask = mask | future
        else:
            mask = mask + np.where(future, -np.inf, 0.0)
    if mask is not None and mask.ndim == 4:
        mask = mask.reshape(B * H, T, T)
    return mask


def _torch(m, x, kpm, am, dy, k_bias_seed=7):
    """The same computation by torch.nn.MultiheadAttention (batch_first, math path).

    in_proj_weight = concat(Wq, Wk, Wv); the key part of in_proj_bias is random: it must
    change nothing (normcore has no key bias)."""
    mha = torch.nn.MultiheadAttention(C, H, bias=m.q.bias is not None, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([m.q.weight.data, m.k.weight.data,
                                                                  m.v.weight.data])))
        mha.out_proj.weight.copy_(torch.from_numpy(m.o.weight.data))
        if m.q.bias is not None:
            mha.in_proj_bias.copy_(torch.from_numpy(np.concatenate([m.q.bias.data, _x(C, seed=k_bias_seed),
                                                                    m.v.bias.data])))
            mha.out_proj.bias.copy_(torch.from_numpy(m.o.bias.data))
    am = _torch_mask(am, m.causal)
    if kpm is not None and am is not None and kpm.dtype != am.dtype:  # PyTorch deprecates mixing types
        kpm, am = (np.where(a, -np.inf, 0.0) if a.dtype == bool else a for a in (kpm, am))
    xt = torch.from_numpy(x.copy()).requires_grad_()
    y, _ = mha(xt, xt, xt, key_padding_mask=None if kpm is None else torch.from_numpy(kpm),
               attn_mask=None if am is None else torch.from_numpy(am), need_weights=True)
    y.backward(torch.from_numpy(dy))
    W, b = mha.in_proj_weight.grad.numpy(), None if mha.in_proj_bias is None else mha.in_proj_bias.grad.numpy()
    grads = {"q.weight": W[:C], "k.weight": W[C:2 * C], "v.weight": W[2 * C:],
             "o.weight": mha.out_proj.weight.grad.numpy()}
    if b is not None:
        grads.update({"q.bias": b[:C], "v.bias": b[2 * C:], "o.bias": mha.out_proj.bias.grad.numpy()})
        assert np.max(np.abs(b[C:2 * C]), initial=0.0) < 1e-12 or np.isnan(b[C:2 * C]).any(), \
            "PyTorch's key bias gradient should be zero"
    return y.detach().numpy(), xt.grad.numpy(), grads


def _close(a, b, what):
    """Equal to 1e-9 relative to the array's scale, NaN exactly where the other is NaN."""
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b), err_msg=f"{what}: NaN in different places")
    scale = float(np.max(np.abs(b[np.isfinite(b)]), initial=1.0))
    np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * scale, equal_nan=True, err_msg=what)


def _assert_matches_torch(m, kpm, am):
    x, dy = _x(B, T, C, seed=1), _x(B, T, C, seed=2)
    y, dx, grads = _normcore(m, x, kpm, am, dy)
    ty, tdx, tgrads = _torch(m, x, kpm, am, dy)
    _close(y, ty, "output")
    _close(dx, tdx, "input gradient")
    assert grads.keys() == tgrads.keys()
    for n in grads:
        _close(grads[n], tgrads[n], n)


# (causal, key padding mask kind, attention mask kind, attention mask shape)
CASES = [
    (causal, kpm, am, shape)
    for causal in (False, True)
    for kpm, am, shape in [
        (None, None, "TT"),
        ("bool", None, "TT"), ("float", None, "TT"),
        (None, "bool", "TT"), (None, "float", "TT"),
        (None, "bool", "BHTT"), (None, "float", "BHTT"),
        ("bool", "bool", "TT"), ("float", "float", "BHTT"),
        ("bool", "float", "TT"), ("float", "bool", "BHTT"),
    ]
]
IDS = [f"{'causal' if c else 'full'}-kpm:{k}-attn:{a}{'' if a is None else '-' + s}" for c, k, a, s in CASES]


@needs_torch
@pytest.mark.parametrize("causal, kpm, am, shape", CASES, ids=IDS)
def test_matches_torch_multihead_attention(causal, kpm, am, shape):
    _assert_matches_torch(_attention(causal), _kpm(kpm), _attn_mask(am, shape))


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
def test_matches_torch_without_biases(causal):
    _assert_matches_torch(_attention(causal, bias=False), _kpm("bool"), _attn_mask("float", "TT"))


@pytest.mark.parametrize("causal, kpm, am, shape", CASES, ids=IDS)
def test_gradcheck_with_masks(causal, kpm, am, shape):
    m = WithMasks(_attention(causal), _kpm(kpm), _attn_mask(am, shape))
    report = nc.gradcheck(m, _x(B, T, C, seed=1))
    assert report.passed, report.table()


def test_gradcheck_takes_a_boolean_mask_as_a_second_input():
    report = nc.gradcheck(_attention(), _x(B, T, C, seed=1), _kpm("bool"))
    assert report.passed, report.table()
    assert [c.name for c in report.checks][0] == "x0"


# --- fully masked rows ------------------------------------------------------------------------

def _fully_masked(where):
    """Masks that leave some query rows without a single key."""
    if where == "kpm":  # every key of sequence 1 is padding
        kpm = np.zeros((B, T), dtype=bool)
        kpm[1] = True
        return kpm, None
    if where == "attn":  # query 2 may attend to nothing, in every sequence and head
        am = np.zeros((T, T), dtype=bool)
        am[2] = True
        return None, am
    am = np.zeros((B, H, T, T))  # additive: query 3 of sequence 0, head 1 only
    am[0, 1, 3] = -np.inf
    return None, am


@pytest.mark.parametrize("where", ["kpm", "attn", "attn additive (B,H,T,T)"])
def test_a_fully_masked_row_is_nan(where):
    kpm, am = _fully_masked(where)
    y = _attention()(_x(B, T, C, seed=1), kpm, am)
    rows = np.isnan(y).all(-1)  # (B, T)
    expected = {"kpm": np.array([[False] * T, [True] * T]),
                "attn": np.array([[False, False, True, False, False]] * B),
                "attn additive (B,H,T,T)": np.array([[False, False, False, True, False], [False] * T])}[where]
    np.testing.assert_array_equal(rows, expected)
    assert np.isfinite(y[~rows]).all()


@needs_torch
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("where", ["kpm", "attn", "attn additive (B,H,T,T)"])
def test_a_fully_masked_row_matches_torch_forward_and_gradients(where, causal):
    """NaN in the same places as PyTorch (output, input gradient, every parameter gradient),
    the same numbers everywhere else."""
    _assert_matches_torch(_attention(causal), *_fully_masked(where))


# --- the convention, the causal case, the key bias -------------------------------------------

def test_boolean_true_means_masked_out_and_equals_the_additive_minus_inf():
    m, x = _attention(), _x(B, T, C, seed=1)
    masked = _attn_mask("bool", "BHTT")
    y_bool = m(x, None, masked)
    np.testing.assert_array_equal(y_bool, m(x, None, np.where(masked, -np.inf, 0.0)))
    assert not np.allclose(y_bool, m(x, None, ~masked & (np.arange(T) != 0)))  # not the opposite convention
    kpm = _kpm("bool")
    np.testing.assert_array_equal(m(x, kpm), m(x, np.where(kpm, -np.inf, 0.0)))


def test_a_masked_key_changes_nothing_and_gets_no_gradient():
    m, x = _attention(), _x(B, T, C, seed=1)
    kpm = np.zeros((B, T), dtype=bool)
    kpm[:, -1] = True
    y = m(x, kpm)
    x2 = x.copy()
    x2[:, -1] += 10.0  # change the masked key (it is also a query: compare the other rows)
    np.testing.assert_allclose(m(x2, kpm)[:, :-1], y[:, :-1], rtol=1e-12, atol=1e-12)


def test_causal_is_the_same_as_a_boolean_upper_triangle():
    m_causal, m_full = _attention(causal=True), _attention(causal=False)
    x = _x(B, T, C, seed=1)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    np.testing.assert_allclose(m_causal(x), m_full(x, attn_mask=future), rtol=1e-13, atol=1e-13)


def test_causal_self_attention_is_the_causal_case_with_the_same_state_dict():
    old = nc.CausalSelfAttention(C, H, rng=0)
    new = nc.MultiheadSelfAttention(C, H, causal=True, rng=0)
    assert isinstance(old, nc.MultiheadSelfAttention) and old.causal
    assert list(old.state_dict()) == ["q.weight", "q.bias", "k.weight", "v.weight", "v.bias", "o.weight", "o.bias"]
    assert list(new.state_dict()) == list(old.state_dict())
    for key, value in old.state_dict().items():
        np.testing.assert_array_equal(new.state_dict()[key], value)
    x, dy = _x(B, T, C, seed=1), _x(B, T, C, seed=2)
    np.testing.assert_array_equal(old(x), new(x))
    np.testing.assert_array_equal(old.backward(dy), new.backward(dy))
    assert nc.MultiheadSelfAttention(C, H, bias=False).k.bias is None
    assert list(nc.MultiheadSelfAttention(C, H, bias=False).state_dict()) == [
        "q.weight", "k.weight", "v.weight", "o.weight"]


def test_key_bias_would_change_nothing_even_with_masks():
    """Why there is no key bias: q_i . bk is the same for every key j of row i."""
    m, x = _attention(causal=True), _x(B, T, C, seed=1)
    kpm, am = _kpm("float"), _attn_mask("float", "BHTT")
    y = m(x, kpm, am)
    m.k.bias = nc.Parameter(_x(C, seed=9))
    np.testing.assert_allclose(m(x, kpm, am), y, rtol=1e-12, atol=1e-12)


# --- validation, caches, sizes, dtypes -------------------------------------------------------

@pytest.mark.parametrize("kwargs, error, words", [
    ({"key_padding_mask": np.zeros((T, B), dtype=bool)}, ValueError, "key_padding_mask must have shape (2, 5)"),
    ({"key_padding_mask": np.zeros((B, T, 1), dtype=bool)}, ValueError, "key_padding_mask"),
    ({"attn_mask": np.zeros((T, T + 1), dtype=bool)}, ValueError, "(5, 5) or (6, 5, 5) or (2, 3, 5, 5)"),
    ({"attn_mask": np.zeros((B * H + 1, T, T), dtype=bool)}, ValueError, "attn_mask must have shape"),
    ({"attn_mask": np.zeros((T, T), dtype=np.int64)}, TypeError, "boolean (True = not allowed to attend) or floating"),
    ({"key_padding_mask": np.zeros((B, T), dtype=np.uint8)}, TypeError, "key_padding_mask must be boolean"),
    ({"attn_mask": "causal"}, TypeError, "attn_mask"),
    ({"attn_mask": [[0.0, 1.0], [2.0]]}, TypeError, "attn_mask"),
])
def test_bad_masks_raise_and_change_nothing(kwargs, error, words):
    m, x, dy = _attention(), _x(B, T, C, seed=1), _x(B, T, C, seed=2)
    m(x)
    with pytest.raises(error) as info:
        m(_x(B, T, C, seed=3), **kwargs)
    assert words in str(info.value)
    dx = m.backward(dy)  # still the backward of the first forward
    m2 = _attention()
    m2(x)
    np.testing.assert_array_equal(dx, m2.backward(dy))


def test_overwriting_the_masks_after_forward_does_not_change_backward():
    x, dy = _x(B, T, C, seed=1), _x(B, T, C, seed=2)
    kpm, am = _kpm("bool"), _attn_mask("float", "TT")
    m = _attention()
    m(x, kpm, am)
    kpm[...] = ~kpm
    am[...] = 0.0
    dx = m.backward(dy)
    m2 = _attention()
    m2(x, _kpm("bool"), _attn_mask("float", "TT"))
    np.testing.assert_array_equal(dx, m2.backward(dy))


@pytest.mark.parametrize("b, t", [(0, T), (B, 0), (0, 0)])
def test_zero_size_inputs_with_masks_give_empty_results(b, t):
    m = _attention(causal=True)
    y = m(np.zeros((b, t, C)), np.zeros((b, t), dtype=bool), np.zeros((t, t)))
    assert y.shape == (b, t, C)
    assert m.backward(np.zeros((b, t, C))).shape == (b, t, C)


def test_float32_input_with_a_float64_mask_stays_float32():
    m = nc.MultiheadSelfAttention(C, H, rng=0, dtype=np.float32)
    y = m(_x(B, T, C, seed=1).astype(np.float32), _kpm("float"), _attn_mask("bool", "BHTT"))
    assert y.dtype == np.float32 and np.isfinite(y).all()
