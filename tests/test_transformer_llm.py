"""Today's LLM options: the reordered norm (OLMo 2), LayerNorm Scaling, Mix-LN, QK-norm over the
whole projection, soft-capping of attention scores and final logits, and the z-loss.

Each is gradient-checked through ``layer_cases.llm_cases`` (``test_nn_layers.py``); here they
are matched to their PyTorch twins of ``normcore.torch_bridge`` (float64, every output and
gradient to 1e-10, a random upstream gradient), the soft-cap and the z-loss also to torch's
formulas written out below, and their arguments, state dicts and edge cases are checked."""

import math

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import perturb_parameters
from normcore.nn.models import block_positions

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")
from normcore import torch_bridge  # noqa: E402 (after the skip: the bridge needs torch)

F = torch.nn.functional
TOL = 1e-10


def randomized(module, seed=0):
    perturb_parameters(module, np.random.default_rng(seed), scale=0.5)
    return module


def assert_matches_its_twin(module, *inputs):
    """normcore's module against its ``to_torch`` twin: the output, every input gradient and
    every parameter's gradient to 1e-10."""
    report = torch_bridge.compare(module, *inputs, out=None)
    names = [row.name for row in report.rows]
    assert all(f"{name} grad" in names for name, _p in module.named_parameters())
    assert any(name.startswith("input") for name in names) == any(
        np.issubdtype(np.asarray(x).dtype, np.floating) for x in inputs)
    for row in report.rows:
        assert row.max_abs <= TOL, row
    assert report.passed, str(report)


# --- the blocks and models against their twins -------------------------------------------------

BLOCKS = {
    "reordered layernorm": dict(position="reordered"),
    "reordered rmsnorm, QK-norm over the projection, soft-capped": dict(
        position="reordered", norm="rmsnorm", qk_norm="rmsnorm", qk_norm_scope="projection", attn_softcap=1.5),
    "pre, LayerNorm Scaling l=4, QK-norm per head": dict(norm_scale="depth", layer_index=4, qk_norm="layernorm"),
    "pre, LayerNorm Scaling l=2, encoder": dict(norm_scale="depth", layer_index=2, causal=False),
    "post, QK-norm over the projection (layernorm)": dict(position="post", qk_norm="layernorm",
                                                         qk_norm_scope="projection"),
    "post, soft-capped attention without QK-norm": dict(position="post", attn_softcap=0.8),
}


@pytest.mark.parametrize("options", BLOCKS.values(), ids=BLOCKS.keys())
def test_the_block_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(1)
    block = randomized(nc.TransformerBlock(6, 2, 8, rng=0, **options))
    assert_matches_its_twin(block, rng.standard_normal((2, 4, 6)))


@pytest.mark.parametrize("options", [dict(position="reordered", attn_softcap=2.0, qk_norm="rmsnorm",
                                          qk_norm_scope="projection"),
                                     dict(norm_scale="depth", layer_index=2)], ids=["reordered", "scaled"])
def test_the_decoder_block_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(2)
    block = randomized(nc.TransformerDecoderBlock(4, 2, 6, rng=0, **options))
    padding = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], dtype=bool)  # the memory's
    assert_matches_its_twin(block, rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), None, padding)


MODELS = {
    "mix of 4, soft-capped logits": dict(position="mix", logit_softcap=3.0),
    "reordered, QK-norm over the projection": dict(position="reordered", norm="rmsnorm", qk_norm="rmsnorm",
                                                   qk_norm_scope="projection"),
    "LayerNorm Scaling": dict(norm_scale="depth", attn_softcap=2.0),
}


@pytest.mark.parametrize("options", MODELS.values(), ids=MODELS.keys())
def test_the_model_matches_its_torch_twin_with_every_gradient(options):
    model = randomized(nc.TinyTransformer(7, 4, 4, 2, 5, d_ff=6, rng=0, **options))
    assert_matches_its_twin(model, np.random.default_rng(3).integers(0, 7, (2, 5)))


@pytest.mark.parametrize("options", [dict(position="mix", mix_post_fraction=0.5, logit_softcap=2.0),
                                     dict(norm_scale="depth", qk_norm="rmsnorm", qk_norm_scope="projection")],
                         ids=["mix", "scaled"])
def test_the_encoder_decoder_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(4)
    model = randomized(nc.TinySeq2Seq(5, 6, 4, 2, 2, 4, 3, d_ff=6, rng=0, **options))
    padding = np.array([[0, 0, 1, 1], [0, 0, 0, 0]], dtype=bool)  # the source's
    assert_matches_its_twin(model, rng.integers(0, 5, (2, 4)), rng.integers(0, 6, (2, 3)), padding)


@pytest.mark.parametrize("options", [dict(qk_norm="layernorm", qk_norm_scope="projection", attn_softcap=1.0,
                                          add_bias_kv=True, add_zero_attn=True, kdim=3),
                                     dict(attn_softcap=0.5, causal=True)], ids=["projection", "soft-cap"])
def test_cross_attention_matches_its_torch_twin_with_masks(options):
    rng = np.random.default_rng(5)
    attn = randomized(nc.MultiheadAttention(6, 2, rng=0, **options))
    kdim = options.get("kdim", 6)
    padding = np.array([[0, 0, 0, 1], [0, 0, 0, 0]], dtype=bool)
    assert_matches_its_twin(attn, rng.standard_normal((2, 3, 6)), rng.standard_normal((2, 4, kdim)),
                            rng.standard_normal((2, 4, 6)), padding, rng.standard_normal((3, 4)))


# --- the twins' round trips ----------------------------------------------------------------------

ROUND_TRIPS = {
    "SoftCap": lambda: nc.SoftCap(2.5),
    "self-attention over the projection, soft-capped": lambda: nc.MultiheadSelfAttention(
        6, 3, causal=True, qk_norm="rmsnorm", qk_norm_scope="projection", attn_softcap=4.0, rng=0),
    "causal attention soft-capped": lambda: nc.CausalSelfAttention(4, 2, attn_softcap=1.5, rng=0),
    "cross-attention over the projection": lambda: nc.MultiheadAttention(
        6, 2, kdim=4, add_bias_kv=True, qk_norm="layernorm", qk_norm_scope="projection", rng=0),
}


@pytest.mark.parametrize("make", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_from_torch_gives_back_the_same_module_and_key_map_is_the_identity(make):
    module = randomized(make())
    twin = torch_bridge.to_torch(module)
    keys = torch_bridge.key_map(module, twin)
    assert keys == {key: (key, ...) for key in module.state_dict()}  # the twins use normcore's names
    back = torch_bridge.from_torch(twin)
    assert type(back) is type(module) and repr(back) == repr(module)
    assert list(back.state_dict()) == list(module.state_dict())
    for key, value in module.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[key], value, err_msg=key)
        np.testing.assert_array_equal(twin.state_dict()[key].numpy(), value, err_msg=key)


def test_only_the_blocks_torch_has_become_torchs_own_layers():
    plain = torch_bridge.to_torch(nc.TransformerBlock(4, 2, position="pre", rng=0))
    assert isinstance(plain, torch.nn.TransformerEncoderLayer)
    for options in (dict(norm_scale="depth", layer_index=3), dict(attn_softcap=2.0), dict(position="reordered"),
                    dict(qk_norm="rmsnorm", qk_norm_scope="projection")):
        twin = torch_bridge.to_torch(nc.TransformerBlock(4, 2, rng=0, **options))
        assert not isinstance(twin, torch.nn.TransformerEncoderLayer), options
        twin = torch_bridge.to_torch(nc.TransformerDecoderBlock(4, 2, rng=0, **options))
        assert not isinstance(twin, torch.nn.TransformerDecoderLayer), options


# --- soft-cap and z-loss against torch ------------------------------------------------------------

def test_softcap_matches_torch_and_its_slope_is_one_minus_the_squared_ratio():
    rng = np.random.default_rng(4)
    x, dy = 5.0 * rng.standard_normal((3, 7)), rng.standard_normal((3, 7))
    cap = nc.SoftCap(2.5)
    y = cap(x)
    dx = cap.backward(dy)
    xt = torch.tensor(x, requires_grad=True)
    yt = 2.5 * torch.tanh(xt / 2.5)
    (yt * torch.tensor(dy)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, dy * (1 - (y / 2.5) ** 2), rtol=1e-9, atol=1e-12)
    assert np.all(np.abs(cap(np.array([1e6, -1e6]))) <= 2.5)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("targets", ["indices", "probabilities"])
def test_the_z_loss_matches_torch(reduction, targets):
    rng = np.random.default_rng(5)
    x = 3.0 * rng.standard_normal((4, 5, 3))
    if targets == "indices":
        t = rng.integers(0, 5, (4, 3))
        t[0, 1] = t[2, 2] = -100
        kept = torch.tensor(t != -100)
    else:
        t = rng.random((4, 5, 3))
        t /= t.sum(1, keepdims=True)
        kept = torch.ones((4, 3), dtype=torch.bool)
    weight = rng.uniform(0.5, 2.0, 5)
    ce = nc.CrossEntropyLoss(weight=weight, reduction=reduction, label_smoothing=0.1, z_loss=0.03)
    loss = ce(x, t)
    g = rng.standard_normal(loss.shape) if reduction == "none" else np.array(0.7)
    dx = ce.backward(g)
    xt = torch.tensor(x, requires_grad=True)
    lt = F.cross_entropy(xt, torch.tensor(t), weight=torch.tensor(weight), reduction=reduction,
                         label_smoothing=0.1)
    z = 0.03 * torch.where(kept, torch.logsumexp(xt, 1), 0.0) ** 2
    lt = {"mean": lambda: lt + z.sum() / kept.sum(), "sum": lambda: lt + z.sum(), "none": lambda: lt + z}[reduction]()
    (lt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(loss, lt.detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=0, atol=TOL)
    assert_matches_its_twin(ce, x, t)  # the bridge's twin computes the same


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_the_z_loss_twin_takes_unbatched_logits_and_an_ignored_target(reduction):
    rng = np.random.default_rng(8)
    ce = nc.CrossEntropyLoss(reduction=reduction, z_loss=0.2, ignore_index=1)
    assert_matches_its_twin(ce, rng.standard_normal(5), np.array(3))
    assert_matches_its_twin(ce, rng.standard_normal((3, 5)), np.array([1, 0, 4]))


def test_the_z_loss_ignores_the_ignored_rows_and_adds_nothing_at_zero():
    rng = np.random.default_rng(6)
    x, t = rng.standard_normal((5, 4)), np.array([0, -100, 3, 1, -100])
    ce = nc.CrossEntropyLoss(z_loss=0.5)
    loss = ce(x, t)
    dx = ce.backward()
    assert np.all(dx[[1, 4]] == 0)
    x2 = x.copy()
    x2[[1, 4]] += 100.0  # an ignored row's logits do not enter the loss
    assert ce(x2, t) == loss
    plain = nc.CrossEntropyLoss()(x, t)
    lse = np.log(np.exp(x).sum(1))[[0, 2, 3]]
    assert loss == pytest.approx(plain + 0.5 * np.mean(lse ** 2), rel=1e-13)
    assert nc.CrossEntropyLoss(z_loss=0.0)(x, t) == plain


# --- placements: children, state dicts, Mix-LN's positions ---------------------------------------

def test_the_reordered_block_has_output_norms_only_and_its_state_dict_loads():
    block = nc.TransformerBlock(4, 2, 6, position="reordered", rng=0)
    names = list(block.state_dict())
    assert not any(n.startswith(("norm1.", "norm2.")) for n in names)
    assert names.index("norm1_out.weight") > names.index("attn.o.bias")
    assert names.index("norm2_out.weight") > names.index("ffn.fc2.bias")
    other = randomized(nc.TransformerBlock(4, 2, 6, position="reordered", rng=1))
    block.load_state_dict(other.state_dict())
    x = np.random.default_rng(0).standard_normal((1, 3, 4))
    np.testing.assert_array_equal(block(x), other(x))


def test_the_reordered_blocks_dropout_acts_after_its_output_norm_as_in_olmos_code():
    """x + drop(Norm_out(F(x))), OLMo's order (the norm, the dropout, the add): a dropped unit
    of a branch adds exactly nothing to the stream, which a dropout inside the norm would not
    give."""
    block = randomized(nc.TransformerBlock(6, 2, 8, position="reordered", dropout=0.5, rng=0))
    block.train()
    x = np.random.default_rng(3).standard_normal((2, 4, 6))
    y = block(x)
    (mask1, *_), (mask2, *_) = block.drop1._cache, block.drop2._cache
    assert mask1 is not None and not mask1.all() and not mask2.all()
    h1 = x + block.norm1_out(block.attn(x)) * mask1 * 2.0  # kept units scaled by 1 / (1 - p)
    np.testing.assert_allclose(y, h1 + block.norm2_out(block.ffn(h1)) * mask2 * 2.0, rtol=0, atol=1e-12)


def test_qk_norm_over_the_projection_has_weights_of_the_projection_width():
    sd = nc.MultiheadSelfAttention(6, 3, qk_norm="rmsnorm", qk_norm_scope="projection", rng=0).state_dict()
    assert sd["q_norm.weight"].shape == sd["k_norm.weight"].shape == (6,)
    sd = nc.MultiheadSelfAttention(6, 3, qk_norm="layernorm", rng=0).state_dict()
    assert sd["q_norm.weight"].shape == sd["q_norm.bias"].shape == (2,)


def test_the_two_qk_norm_scopes_differ_and_coincide_with_one_head():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 6))
    head, proj = (nc.MultiheadSelfAttention(6, 2, qk_norm="rmsnorm", qk_norm_scope=s, rng=0)
                  for s in ("head", "projection"))
    assert np.abs(head(x) - proj(x)).max() > 1e-3
    one = [nc.MultiheadSelfAttention(6, 1, qk_norm="rmsnorm", qk_norm_scope=s, rng=0)(x)
           for s in ("head", "projection")]
    np.testing.assert_allclose(one[0], one[1], rtol=0, atol=1e-14)


@pytest.mark.parametrize("n, fraction, n_post", [(4, None, 1), (12, None, 3), (24, None, 6), (3, None, 0),
                                                 (10, 0.3, 3), (100, 0.29, 29), (5, 1.0, 5), (5, 0.0, 0)])
def test_mix_ln_puts_post_ln_in_the_first_blocks_rounded_down(n, fraction, n_post):
    assert block_positions("mix", n, fraction, "test") == ["post"] * n_post + ["pre"] * (n - n_post)


def test_models_set_each_blocks_position_depth_and_final_norm():
    mix = nc.TinyTransformer(5, 4, 4, 2, 4, position="mix", rng=0)
    assert [b.position for b in mix.blocks] == ["post", "pre", "pre", "pre"] and hasattr(mix, "norm_f")
    assert not hasattr(nc.TinyTransformer(5, 4, 2, 2, 4, position="mix", mix_post_fraction=1.0, rng=0), "norm_f")
    assert hasattr(nc.TinyTransformer(5, 4, 2, 2, 4, position="reordered", rng=0), "norm_f")
    scaled = nc.TinyTransformer(5, 4, 3, 2, 4, norm_scale="depth", rng=0)
    assert [b.layer_index for b in scaled.blocks] == [1, 2, 3]
    assert [b.depth_scale for b in scaled.blocks] == [1.0, 1 / math.sqrt(2), 1 / math.sqrt(3)]
    s2s = nc.TinySeq2Seq(5, 6, 4, 2, 2, 4, 3, n_decoder_layers=3, norm_scale="depth", logit_softcap=2.0, rng=0)
    assert [b.layer_index for b in s2s.decoder] == [1, 2, 3] and [b.layer_index for b in s2s.encoder] == [1, 2]
    logits = s2s(np.array([[1, 2, 3]]), np.array([[0, 1]]))
    assert np.abs(logits).max() < 2.0 and "logit_cap" not in "".join(s2s.state_dict())


def test_layernorm_scaling_at_depth_one_is_pre_ln():
    x = np.random.default_rng(8).standard_normal((2, 3, 4))
    plain = nc.TransformerBlock(4, 2, rng=0)
    scaled = nc.TransformerBlock(4, 2, norm_scale="depth", layer_index=1, rng=0)
    np.testing.assert_array_equal(plain(x), scaled(x))
    deeper = nc.TransformerBlock(4, 2, norm_scale="depth", layer_index=9, rng=0)
    assert np.abs(deeper(x) - plain(x)).max() > 1e-3


# --- bad arguments raise, and a failed call changes nothing --------------------------------------

BAD = [
    (lambda: nc.SoftCap(0), ValueError, "> 0"),
    (lambda: nc.SoftCap(-2.0), ValueError, "> 0"),
    (lambda: nc.SoftCap("2"), TypeError, "number"),
    (lambda: nc.SoftCap(float("nan")), ValueError, "finite"),
    (lambda: nc.CrossEntropyLoss(z_loss=-1e-4), ValueError, "z_loss"),
    (lambda: nc.CrossEntropyLoss(z_loss="1e-4"), TypeError, "z_loss"),
    (lambda: nc.MultiheadSelfAttention(4, 2, qk_norm="rmsnorm", qk_norm_scope="heads"), ValueError, "'projection'"),
    (lambda: nc.MultiheadSelfAttention(4, 2, qk_norm="rmsnorm", qk_norm_scope=1), TypeError, "qk_norm_scope"),
    (lambda: nc.MultiheadSelfAttention(4, 2, qk_norm_scope="projection"), ValueError, "qk_norm=None"),
    (lambda: nc.MultiheadAttention(4, 2, attn_softcap=0.0), ValueError, "attn_softcap"),
    (lambda: nc.TransformerBlock(4, 2, position="olmo"), ValueError, "reordered"),
    (lambda: nc.TransformerBlock(4, 2, norm_scale="depth"), ValueError, "layer_index"),
    (lambda: nc.TransformerBlock(4, 2, norm_scale="depth", layer_index=0), ValueError, "layer_index"),
    (lambda: nc.TransformerBlock(4, 2, norm_scale="depth", layer_index=2.0), TypeError, "layer_index"),
    (lambda: nc.TransformerBlock(4, 2, layer_index=2), ValueError, "norm_scale=None"),
    (lambda: nc.TransformerBlock(4, 2, position="peri", norm_scale="depth", layer_index=2), ValueError, "'pre'"),
    (lambda: nc.TransformerDecoderBlock(4, 2, norm_scale="sqrt", layer_index=2), ValueError, "'depth'"),
    (lambda: nc.TinyTransformer(5, 4, 2, 2, 4, position="mixed"), ValueError, "'mix'"),
    (lambda: nc.TinyTransformer(5, 4, 2, 2, 4, mix_post_fraction=0.25), ValueError, "position='mix'"),
    (lambda: nc.TinyTransformer(5, 4, 2, 2, 4, position="mix", mix_post_fraction=2), ValueError, "[0, 1]"),
    (lambda: nc.TinyTransformer(5, 4, 2, 2, 4, position="mix", norm_scale="depth"), ValueError, "'pre'"),
    (lambda: nc.TinyTransformer(5, 4, 2, 2, 4, logit_softcap=0), ValueError, "logit_softcap"),
    (lambda: nc.TinySeq2Seq(5, 6, 4, 1, 2, 4, 3, logit_softcap=True), TypeError, "logit_softcap"),
]


@pytest.mark.parametrize("make, error, says", BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_arguments_raise_saying_what_was_expected(make, error, says):
    with pytest.raises(error) as raised:
        make()
    assert says in str(raised.value)


def test_a_failed_forward_keeps_the_last_cache():
    rng = np.random.default_rng(9)
    cap, x, dy = nc.SoftCap(1.0), rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    cap(x)
    with pytest.raises(TypeError):
        cap(np.array([["a"]]))
    np.testing.assert_allclose(cap.backward(dy), dy * (1 - np.tanh(x) ** 2), rtol=1e-14, atol=1e-15)
    ce = nc.CrossEntropyLoss(z_loss=0.1)
    ce(x, np.array([0, 2]))
    before = ce.backward()
    with pytest.raises(ValueError):
        ce(x, np.array([0, 5]))
    np.testing.assert_array_equal(ce.backward(), before)
    attn = nc.MultiheadSelfAttention(4, 2, attn_softcap=1.0, rng=0)
    h = rng.standard_normal((1, 3, 4))
    attn(h)
    first = attn.backward(np.ones((1, 3, 4)))
    with pytest.raises(ValueError):
        attn(h, attn_mask=np.zeros((2, 2), bool))
    np.testing.assert_array_equal(attn.backward(np.ones((1, 3, 4))), first)
