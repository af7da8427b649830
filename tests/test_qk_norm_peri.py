"""QK-norm in every attention and Peri-LN (the sandwich norm) in every block and model.

Gradient checks in float64 with random parameters (random norm weights, never ones) and a random
upstream gradient, of every attention and block here (the two models with Peri-LN and QK-norm are
gradchecked with the other layer cases, in test_nn_layers.py); properties that need no oracle
(the logit bound QK-norm exists for, the identity a Peri-LN block is when its branches are zero,
the key-bias rule); and PyTorch parity through ``normcore.torch_bridge`` (the twins written in
torch ops, since torch has neither QK-norm attention nor a Peri-LN block), to 1e-10 in float64,
on masks, causal or not, and on C, Fortran, transposed and sliced inputs.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import normcore as nc
from normcore._install import TORCH_CPU
from normcore.layer_cases import perturb_parameters, randomize_parameters
from norm_tiers import suite_settings

QK = ["rmsnorm", "layernorm"]


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _random(module, seed=0, scale=0.5):
    """Every parameter moved off its initial value, norm weights included."""
    return perturb_parameters(module, np.random.default_rng(seed), scale)


# --- construction, names and errors ------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda q: nc.MultiheadSelfAttention(8, 2, qk_norm=q),
    lambda q: nc.CausalSelfAttention(8, 2, qk_norm=q),
    lambda q: nc.MultiheadAttention(8, 2, qk_norm=q),
    lambda q: nc.TransformerBlock(8, 2, qk_norm=q),
    lambda q: nc.TransformerDecoderBlock(8, 2, qk_norm=q),
    lambda q: nc.TinyTransformer(5, 8, 1, 2, 4, qk_norm=q),
    lambda q: nc.TinySeq2Seq(5, 5, 8, 1, 2, 4, 4, qk_norm=q),
], ids=["MHSA", "causal", "MHA", "block", "decoder block", "TinyTransformer", "TinySeq2Seq"])
@pytest.mark.parametrize("bad, error", [("RMSNorm", ValueError), ("l2", ValueError), ("", ValueError),
                                        (True, TypeError), (1, TypeError), (["rmsnorm"], TypeError)])
def test_a_bad_qk_norm_is_refused_with_what_was_expected(make, bad, error):
    with pytest.raises(error, match=r"qk_norm must be None, 'rmsnorm' or 'layernorm', got "):
        make(bad)


def test_a_bad_position_names_peri_among_the_choices():
    with pytest.raises(ValueError, match="peri"):
        nc.TransformerBlock(8, 2, position="sandwich")


@pytest.mark.parametrize("qk_norm, bias, expected", [
    ("rmsnorm", True, ["q.weight", "q.bias", "k.weight", "k.bias", "v.weight", "v.bias", "o.weight", "o.bias",
                       "q_norm.weight", "k_norm.weight"]),
    ("layernorm", True, ["q.weight", "q.bias", "k.weight", "k.bias", "v.weight", "v.bias", "o.weight", "o.bias",
                         "q_norm.weight", "q_norm.bias", "k_norm.weight"]),
    ("layernorm", False, ["q.weight", "k.weight", "v.weight", "o.weight", "q_norm.weight", "k_norm.weight"]),
])
def test_children_and_state_dict_keys(qk_norm, bias, expected):
    attn = nc.MultiheadSelfAttention(8, 2, bias=bias, qk_norm=qk_norm)
    assert list(attn.state_dict()) == expected
    norm_class = nc.RMSNorm if qk_norm == "rmsnorm" else nc.LayerNorm
    for norm in (attn.q_norm, attn.k_norm):
        assert type(norm) is norm_class and norm.normalized_shape == (4,)  # over D = C / H, shared by the heads
    assert attn.q_norm.eps == (None if qk_norm == "rmsnorm" else 1e-5)  # the norms' own defaults
    assert "qk_norm" in attn.extra_repr()


def test_qk_norm_none_keeps_the_attention_as_it_was():
    attn = nc.MultiheadSelfAttention(8, 2, rng=0)
    assert attn.q_norm is None and attn.k_norm is None and attn.k.bias is None
    assert "q_norm" not in attn.state_dict() and "qk_norm" not in attn.extra_repr()


def test_peri_children_keep_the_pre_norm_names_and_add_output_norms():
    block = nc.TransformerBlock(8, 2, 16, position="peri", qk_norm="rmsnorm")
    names = [name for name, _ in block.named_modules() if name and "." not in name]
    assert names == ["norm1", "attn", "norm1_out", "norm2", "ffn", "norm2_out", "drop1", "drop2"]
    decoder = nc.TransformerDecoderBlock(8, 2, 16, position="peri")
    assert {"norm1_out", "norm2_out", "norm3_out"} <= dict(decoder.named_modules()).keys()
    assert hasattr(nc.TinyTransformer(5, 8, 1, 2, 4, position="peri"), "norm_f")  # the final norm, as Gemma
    model = nc.TinySeq2Seq(5, 5, 8, 1, 2, 4, 4, position="peri")
    assert hasattr(model, "enc_norm") and hasattr(model, "dec_norm")


# --- gradient checks ---------------------------------------------------------------------------

def _padding(B, T):
    mask = np.zeros((B, T), dtype=bool)
    mask[0, T // 2:] = True  # half of the first sequence is padding; no row is fully masked
    return mask


ATTENTIONS = [  # (label, make(qk_norm), inputs)
    ("self", lambda q: nc.MultiheadSelfAttention(6, 2, qk_norm=q, rng=1), (_x(2, 4, 6),)),
    ("self masked", lambda q: nc.MultiheadSelfAttention(6, 2, qk_norm=q, rng=1),
     (_x(2, 4, 6), _padding(2, 4), _x(4, 4, seed=3))),
    ("causal", lambda q: nc.CausalSelfAttention(6, 2, qk_norm=q, rng=1), (_x(2, 4, 6),)),
    ("cross kdim vdim masked", lambda q: nc.MultiheadAttention(6, 2, kdim=5, vdim=3, qk_norm=q, rng=1),
     (_x(2, 3, 6), _x(2, 5, 5, seed=1), _x(2, 5, 3, seed=2), _padding(2, 5))),
    ("cross added keys causal", lambda q: nc.MultiheadAttention(6, 2, add_bias_kv=True, add_zero_attn=True,
                                                                causal=True, qk_norm=q, rng=1),
     (_x(2, 4, 6), _x(2, 4, 6, seed=1), _x(2, 4, 6, seed=2))),
    ("cross no bias", lambda q: nc.MultiheadAttention(6, 2, bias=False, qk_norm=q, rng=1),
     (_x(2, 3, 6), _x(2, 5, 6, seed=1), _x(2, 5, 6, seed=2))),
]


class WithMasks(nc.Module):
    """A module with its masks held fixed, so gradcheck differentiates the floating inputs only."""

    def __init__(self, module, floats, masks):
        self.module, self.n, self.masks = module, len(floats), masks

    def forward(self, *floats):
        return self.module(*floats, *self.masks)

    def backward(self, dy):
        return self.module.backward(dy)


def _split(inputs):
    """(floating inputs, the masks after them)."""
    n = 3 if len(inputs) >= 3 and inputs[2].ndim == 3 else 1
    return inputs[:n], inputs[n:]


@pytest.mark.parametrize("qk_norm", QK)
@pytest.mark.parametrize("label, make, inputs", ATTENTIONS, ids=[a[0] for a in ATTENTIONS])
def test_gradcheck_attention_with_qk_norm(label, make, inputs, qk_norm):
    attn = _random(make(qk_norm))
    floats, masks = _split(inputs)
    report = nc.gradcheck(WithMasks(attn, floats, masks), *floats, seed=2)
    assert report.passed, report.table()
    assert {"module.q_norm.weight", "module.k_norm.weight"} <= {c.name for c in report.checks}


BLOCKS = [  # (label, make(), inputs)
    ("encoder peri layernorm", lambda: nc.TransformerBlock(6, 2, 8, position="peri", causal=False, rng=2),
     (_x(2, 4, 6), _padding(2, 4))),
    ("causal peri rmsnorm qk rmsnorm", lambda: nc.TransformerBlock(6, 2, 8, "rmsnorm", "peri", qk_norm="rmsnorm",
                                                                   rng=2), (_x(2, 4, 6),)),
    ("pre qk layernorm", lambda: nc.TransformerBlock(6, 2, 8, qk_norm="layernorm", rng=2), (_x(2, 4, 6),)),
    ("post qk rmsnorm no bias", lambda: nc.TransformerBlock(6, 2, 8, position="post", qk_norm="rmsnorm", bias=False,
                                                            rng=2), (_x(2, 4, 6),)),
    ("peri dropout", lambda: nc.TransformerBlock(6, 2, 8, position="peri", dropout=0.3, rng=2), (_x(2, 4, 6),)),
    ("decoder peri qk layernorm", lambda: nc.TransformerDecoderBlock(6, 2, 8, position="peri", qk_norm="layernorm",
                                                                     rng=2),
     (_x(2, 3, 6), _x(2, 5, 6, seed=1))),
    ("decoder peri rmsnorm", lambda: nc.TransformerDecoderBlock(6, 2, 8, "rmsnorm", "peri", rng=2),
     (_x(2, 3, 6), _x(2, 5, 6, seed=1))),
]


@pytest.mark.parametrize("label, make, inputs", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_gradcheck_blocks_with_peri_and_qk_norm(label, make, inputs):
    floats = inputs[:2] if "decoder" in label else inputs[:1]
    report = nc.gradcheck(WithMasks(_random(make()), floats, inputs[len(floats):]), *floats, seed=3)
    assert report.passed, report.table()


# --- properties, no oracle ---------------------------------------------------------------------

def _logits(monkeypatch, attn, *inputs):
    """The scores S that the attention's softmax receives (masks included)."""
    seen = []
    real = nc.nn.attention.softmax

    def spy(S, axis=-1):
        seen.append(S.copy())
        return real(S, axis=axis)

    monkeypatch.setattr(nc.nn.attention, "softmax", spy)
    attn(*inputs)
    return seen[-1]


def test_rmsnorm_qk_rows_have_rms_one_and_equal_q_k_give_logits_sqrt_d(monkeypatch):
    """With unit weights each head's normalised q row has RMS 1; with Wq = Wk (no biases) a
    query meets its own key at q_hat . q_hat / sqrt(D) = D / sqrt(D) = sqrt(D) exactly. A norm
    placed after the 1/sqrt(D) scaling, or a skipped one, misses both."""
    C, H = 12, 3
    D = C // H
    attn = nc.MultiheadSelfAttention(C, H, bias=False, qk_norm="rmsnorm", rng=0)
    attn.k.weight.data[...] = attn.q.weight.data * 50.0  # a large key scale: the norm removes it
    x = 30.0 * _x(2, 5, C)
    S = _logits(monkeypatch, attn, x)  # (B, H, T, T)
    q = attn._cache[0]  # (B, H, T, D), the normalised queries
    np.testing.assert_allclose(np.sqrt((q ** 2).mean(-1)), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.diagonal(S, axis1=-2, axis2=-1), math.sqrt(D), rtol=1e-12)
    assert np.abs(S).max() <= math.sqrt(D) * (1 + 1e-12)


@pytest.mark.parametrize("qk_norm", [None, "rmsnorm"])
def test_logits_are_bounded_by_the_norm_weights_whatever_the_projections(monkeypatch, qk_norm):
    """|S| <= sqrt(D) max|gamma_q| max|gamma_k| with RMSNorm QK-norm, even with projections
    scaled by 1e3 (what a high learning rate does); without QK-norm the logits blow up."""
    C, H = 8, 2
    D = C // H
    attn = _random(nc.MultiheadSelfAttention(C, H, qk_norm=qk_norm, rng=1), seed=1)
    attn.q.weight.data *= 1e3
    attn.k.weight.data *= 1e3
    S = _logits(monkeypatch, attn, _x(3, 6, C, seed=2))
    if qk_norm is None:
        assert np.abs(S).max() > 1e3  # what QK-norm prevents
    else:
        bound = math.sqrt(D) * np.abs(attn.q_norm.weight.data).max() * np.abs(attn.k_norm.weight.data).max()
        assert np.abs(S).max() <= bound * (1 + 1e-12)
        assert np.abs(S).max() > 0.3 * bound  # the bound is not vacuous


@pytest.mark.parametrize("qk_norm", QK)
def test_qk_norm_output_ignores_the_scale_of_the_query_and_key_projections(qk_norm):
    """Without q and k biases, norm(c q) = norm(q) for c > 0: Wq and Wk may grow without
    changing the attention. Holds only when the norm comes before the scores."""
    attn = _random(nc.MultiheadSelfAttention(8, 2, bias=False, qk_norm=qk_norm, rng=0))
    attn.q_norm.eps = attn.k_norm.eps = 1e-30  # eps inside the norm is all that breaks the invariance
    x = _x(2, 5, 8)
    y = attn(x)
    attn.q.weight.data *= 7.0
    attn.k.weight.data *= 30.0
    np.testing.assert_allclose(attn(x), y, rtol=1e-10, atol=1e-12)
    attn.q.weight.data *= -1.0  # a negative scale flips the normalised queries: not invariant
    assert np.abs(attn(x) - y).max() > 1e-2


@pytest.mark.parametrize("qk_norm", QK)
def test_with_qk_norm_the_key_bias_changes_the_output_and_has_a_gradient(qk_norm):
    attn = _random(nc.MultiheadSelfAttention(8, 2, qk_norm=qk_norm, rng=0))
    x, dy = _x(2, 5, 8), _x(2, 5, 8, seed=1)
    y = attn(x)
    attn.zero_grad()
    attn.backward(dy)
    assert np.abs(attn.k.bias.grad).max() > 1e-3
    attn.k.bias.data += _x(8, seed=2)  # not constant per head: LayerNorm would remove that part
    assert np.abs(attn(x) - y).max() > 1e-3


def test_a_bias_after_the_key_norm_is_a_per_row_constant_unless_a_zero_key_escapes_it():
    """Why a LayerNorm k_norm has no bias: beta_k is added to every normalised key, so
    q_i . beta_k shifts a whole row of scores and softmax ignores it (output unchanged,
    gradient 0). The zero key of add_zero_attn is appended after the norm and does not get
    beta_k, so there it matters, and k_norm has a bias."""
    attn = _random(nc.MultiheadSelfAttention(8, 2, qk_norm="layernorm", rng=0))
    attn.k_norm = _random(nc.LayerNorm(4, bias=True), seed=1)  # put a bias in by hand
    x, dy = _x(2, 5, 8), _x(2, 5, 8, seed=1)
    y = attn(x)
    attn.zero_grad()
    attn.backward(dy)
    assert np.abs(attn.k_norm.bias.grad).max() < 1e-12
    attn.k_norm.bias.data += 3.0 * _x(4, seed=2)
    np.testing.assert_allclose(attn(x), y, rtol=1e-10, atol=1e-12)

    zero = _random(nc.MultiheadAttention(8, 2, add_zero_attn=True, qk_norm="layernorm", rng=0))
    assert zero.k_norm.bias is not None
    y = zero(x, x, x)
    zero.zero_grad()
    zero.backward(dy)
    assert np.abs(zero.k_norm.bias.grad).max() > 1e-3
    zero.k_norm.bias.data += 0.5
    assert np.abs(zero(x, x, x) - y).max() > 1e-3


def _zero_branches(module):
    """Every residual branch's last projection set to 0 (and the output norms' biases), so F = 0."""
    for name, p in module.named_parameters():
        if name.startswith(("attn.o.", "self_attn.o.", "cross_attn.o.", "ffn.fc2.")) or (
                "_out." in name and name.endswith("bias")):
            p.data[...] = 0.0
    return module


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_a_peri_block_with_zero_branches_is_the_identity_and_passes_dy_through(norm):
    for block, inputs in ((nc.TransformerBlock(8, 2, 16, norm, "peri", qk_norm="rmsnorm", rng=0), (_x(2, 5, 8),)),
                          (nc.TransformerDecoderBlock(8, 2, 16, norm, "peri", rng=0), (_x(2, 5, 8), _x(2, 3, 8)))):
        _zero_branches(_random(block))
        dy = _x(2, 5, 8, seed=9)
        np.testing.assert_array_equal(block(*inputs), inputs[0])
        dx = block.backward(dy)
        np.testing.assert_array_equal(dx[0] if isinstance(dx, tuple) else dx, dy)


def test_a_peri_branch_adds_at_most_its_output_norm_to_the_stream():
    """Peri-LN bounds what a branch adds: scaling the feed-forward's output by 1e6 leaves the
    block's output unchanged (RMSNorm_out is scale-invariant), where Pre-Norm's grows."""
    x = _x(2, 5, 8)
    outputs = {}
    for position in ("peri", "pre"):
        block = _random(nc.TransformerBlock(8, 2, 16, "rmsnorm", position, rng=0))
        y = block(x)
        block.ffn.fc2.weight.data *= 1e6
        block.ffn.fc2.bias.data *= 1e6
        outputs[position] = np.abs(block(x) - y).max()
    assert outputs["peri"] < 1e-8 and outputs["pre"] > 1e3


# --- PyTorch parity ----------------------------------------------------------------------------

try:
    import torch  # noqa: F401
    HAS_TORCH = True
except ImportError:
    HAS_TORCH = False
needs_torch = pytest.mark.skipif(not HAS_TORCH, reason=f"PyTorch is not installed ({TORCH_CPU})")


def _compare(module, *inputs, dtype=np.float64, tol=1e-10):
    from normcore.torch_bridge import compare
    module.to(dtype)
    inputs = tuple(x.astype(dtype) if isinstance(x, np.ndarray) and np.issubdtype(x.dtype, np.floating) else x
                   for x in inputs)
    kwargs = {"atol": tol, "rtol": tol} if dtype == np.float64 else {}
    report = compare(module, *inputs, out=None, seed=11, **kwargs)
    assert report.passed, str(report)
    assert len(report.rows) >= 1 + len(module.parameters())  # the output, the inputs, every parameter
    return report


def _float_mask(B, Tq, Tk, H=None, seed=5):
    shape = (Tq, Tk) if H is None else (B, H, Tq, Tk)
    return 0.5 * _x(*shape, seed=seed)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("qk_norm", QK)
@pytest.mark.parametrize("label, make, inputs", ATTENTIONS + [
    ("self float mask (B,H,T,T)", lambda q: nc.MultiheadSelfAttention(6, 2, causal=True, qk_norm=q, rng=1),
     (_x(3, 5, 6), None, _float_mask(3, 5, 5, H=2))),
    ("cross bool attn_mask", lambda q: nc.MultiheadAttention(6, 2, add_bias_kv=True, qk_norm=q, rng=1),
     (_x(2, 3, 6), _x(2, 4, 6, seed=1), _x(2, 4, 6, seed=2), None, _x(3, 4, seed=4) > 0.8)),
], ids=[a[0] for a in ATTENTIONS] + ["self float mask", "cross bool attn_mask"])
def test_attention_with_qk_norm_matches_torch(label, make, inputs, qk_norm, dtype):
    _compare(_random(make(qk_norm)), *inputs, dtype=dtype)


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("label, make, inputs", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_blocks_with_peri_and_qk_norm_match_torch(label, make, inputs, dtype):
    block = _random(make())
    block.eval()  # dropout draws other masks in torch; in eval both are the identity
    _compare(block, *inputs, dtype=dtype)


@needs_torch
@pytest.mark.parametrize("position, qk_norm, norm", [
    ("peri", None, "layernorm"), ("peri", "rmsnorm", "rmsnorm"), ("pre", "layernorm", "layernorm"),
    ("post", "rmsnorm", "layernorm")])
def test_models_with_peri_and_qk_norm_match_torch(position, qk_norm, norm):
    rng = np.random.default_rng(6)
    tiny = _random(nc.TinyTransformer(11, 8, 2, 2, 6, d_ff=16, norm=norm, position=position, qk_norm=qk_norm,
                                      rng=0), scale=0.3)
    _compare(tiny, rng.integers(0, 11, (2, 6)))
    s2s = _random(nc.TinySeq2Seq(9, 7, 8, 2, 2, 6, 5, d_ff=16, norm=norm, position=position, qk_norm=qk_norm,
                                 rng=0), scale=0.3)
    _compare(s2s, rng.integers(0, 9, (2, 6)), rng.integers(0, 7, (2, 5)), _padding(2, 6))


@needs_torch
@pytest.mark.parametrize("qk_norm", QK)
def test_a_fully_masked_row_is_nan_in_normcore_and_in_the_twin(qk_norm):
    attn = _random(nc.MultiheadSelfAttention(6, 2, qk_norm=qk_norm, rng=0))
    padding = np.zeros((2, 4), dtype=bool)
    padding[1] = True  # every key of sequence 1 is masked out
    report = _compare(attn, _x(2, 4, 6), padding)
    assert np.isnan(attn(_x(2, 4, 6), padding)[1]).all() and report.passed


@needs_torch
def test_the_qk_norm_twins_are_torch_modules_that_come_back_through_from_torch():
    import torch
    from normcore.torch_bridge import from_torch, to_torch
    for attn in (nc.CausalSelfAttention(8, 2, qk_norm="layernorm", rng=0),
                 nc.MultiheadAttention(8, 2, kdim=5, add_zero_attn=True, qk_norm="rmsnorm", rng=0)):
        _random(attn)
        t = to_torch(attn)
        assert not isinstance(t, torch.nn.MultiheadAttention)
        assert isinstance(t.q_norm, torch.nn.LayerNorm if attn.qk_norm == "layernorm" else torch.nn.RMSNorm)
        back = from_torch(t)
        assert type(back) is type(attn) and back.qk_norm == attn.qk_norm and back.causal == attn.causal
        for key, value in attn.state_dict().items():
            np.testing.assert_array_equal(back.state_dict()[key], value)


LAYOUTS = ["C", "F", "transposed", "sliced"]


def _layout(x, layout):
    if layout == "F":
        return np.asfortranarray(x)
    if layout == "transposed":
        return np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)
    if layout == "sliced":
        wide = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
        wide[..., ::2] = x
        return wide[..., ::2]
    return np.ascontiguousarray(x)


@needs_torch
@suite_settings(max_examples=20)
@given(B=st.integers(1, 3), T=st.integers(1, 5), H=st.integers(1, 3), D=st.integers(3, 5),
       qk_norm=st.sampled_from(QK), causal=st.booleans(), peri=st.booleans(), padded=st.booleans(),
       layout=st.sampled_from(LAYOUTS), seed=st.integers(0, 2 ** 16))
def test_random_shapes_parameters_and_layouts_match_torch(B, T, H, D, qk_norm, causal, peri, padded, layout, seed):
    C = H * D
    rng = np.random.default_rng(seed)
    if peri:
        module = nc.TransformerBlock(C, H, 2 * C, position="peri", causal=causal, qk_norm=qk_norm, rng=seed)
    else:
        module = nc.MultiheadSelfAttention(C, H, causal=causal, qk_norm=qk_norm, rng=seed)
    randomize_parameters(module, rng)  # standard-normal weights, norm weights of either sign
    for p in module.parameters():
        if p.ndim == 2:
            p.data /= math.sqrt(p.shape[1])  # projections of unit gain: a finite, smooth softmax
    x = _layout(rng.standard_normal((B, T, C)), layout)
    mask = None
    if padded and T > 1:
        mask = rng.random((B, T)) < 0.4
        mask[:, 0] = False  # every query keeps a key
    _compare(module, x, mask)
