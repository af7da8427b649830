"""Today's LLM options: the reordered norm (OLMo 2), LayerNorm Scaling, Mix-LN, QK-norm over the
whole projection, soft-capping of attention scores and final logits, and the z-loss.

Each is gradient-checked through ``layer_cases.llm_cases`` (``test_nn_layers.py``); here they
are matched to a small PyTorch twin written out below (float64, every gradient to 1e-10, a
random upstream gradient), and their arguments, state dicts and edge cases are checked."""

import math

import numpy as np
import pytest

import normcore as nc
from normcore.layer_cases import perturb_parameters
from normcore.nn.models import block_positions

torch = pytest.importorskip("torch", reason="PyTorch is the oracle of these tests")
F = torch.nn.functional
TOL = 1e-10


# --- the torch twin: the same arithmetic, written with torch.nn.functional ----------------------

def t_norm(x, params, prefix, kind, width):
    """normcore's LayerNorm or RMSNorm (default eps) over the last ``width`` channels."""
    if kind == "rmsnorm":
        return F.rms_norm(x, (width,), params[prefix + ".weight"])
    return F.layer_norm(x, (width,), params[prefix + ".weight"], params.get(prefix + ".bias"), 1e-5)


def t_linear(x, params, prefix):
    return F.linear(x, params[prefix + ".weight"], params.get(prefix + ".bias"))


def t_attention(query, memory, params, prefix, attn, causal):
    """normcore's attention without added keys: QK-norm per head or over the projection, the
    soft-cap before the mask."""
    H, E = attn.num_heads, attn.embed_dim
    D = E // H
    q, k, v = (t_linear(x, params, f"{prefix}.{n}") for x, n in ((query, "q"), (memory, "k"), (memory, "v")))
    scope, kind = attn.qk_norm_scope, attn.qk_norm
    if kind and scope == "projection":
        q, k = t_norm(q, params, f"{prefix}.q_norm", kind, E), t_norm(k, params, f"{prefix}.k_norm", kind, E)
    split = lambda t: t.reshape(t.shape[0], t.shape[1], H, D).transpose(1, 2)  # noqa: E731
    q, k, v = split(q), split(k), split(v)
    if kind and scope == "head":
        q, k = t_norm(q, params, f"{prefix}.q_norm", kind, D), t_norm(k, params, f"{prefix}.k_norm", kind, D)
    S = q @ k.transpose(-1, -2) / math.sqrt(D)
    if attn.attn_softcap is not None:
        S = attn.attn_softcap * torch.tanh(S / attn.attn_softcap)
    if causal:
        S = S.masked_fill(torch.ones(S.shape[-2:], dtype=torch.bool).triu(1), float("-inf"))
    A = (torch.softmax(S, -1) @ v).transpose(1, 2).reshape(query.shape[0], query.shape[1], E)
    return t_linear(A, params, f"{prefix}.o")


def t_residual(x, f, params, prefix, i, block):
    """One sub-layer i of a block at its position, as the table of ``TransformerBlock`` says."""
    norm = lambda h, name: t_norm(h, params, f"{prefix}.{name}", block.norm_kind, block.d_model)  # noqa: E731
    if block.position == "pre":
        return x + f(norm(x, f"norm{i}") / math.sqrt(block.layer_index or 1))
    if block.position == "post":
        return norm(x + f(x), f"norm{i}")
    if block.position == "reordered":
        return x + norm(f(x), f"norm{i}_out")
    raise AssertionError(block.position)


def t_ffn(h, params, prefix):
    return t_linear(F.gelu(t_linear(h, params, f"{prefix}.ffn.fc1")), params, f"{prefix}.ffn.fc2")


def t_block(x, params, prefix, block):
    x = t_residual(x, lambda h: t_attention(h, h, params, f"{prefix}.attn", block.attn, block.attn.causal),
                   params, prefix, 1, block)
    return t_residual(x, lambda h: t_ffn(h, params, prefix), params, prefix, 2, block)


def t_decoder_block(x, memory, params, prefix, block):
    sa = lambda h: t_attention(h, h, params, f"{prefix}.self_attn", block.self_attn, True)  # noqa: E731
    ca = lambda h: t_attention(h, memory, params, f"{prefix}.cross_attn", block.cross_attn, False)  # noqa: E731
    x = t_residual(x, sa, params, prefix, 1, block)
    x = t_residual(x, ca, params, prefix, 2, block)
    return t_residual(x, lambda h: t_ffn(h, params, prefix), params, prefix, 3, block)


def t_lm(tokens, params, model):
    """TinyTransformer: embeddings, blocks, the final norm where the model has one, head, cap."""
    x = params["tok_emb.weight"][tokens] + params["pos_emb.weight"][: tokens.shape[1]]
    for i, block in enumerate(model.blocks):
        x = t_block(x, params, f"blocks.{i}", block)
    if hasattr(model, "norm_f"):
        x = t_norm(x, params, "norm_f", model.blocks[0].norm_kind, x.shape[-1])
    logits = t_linear(x, params, "head")
    cap = getattr(model, "logit_cap", None)
    return logits if cap is None else cap.cap * torch.tanh(logits / cap.cap)


def torch_params(module):
    """The module's parameters as float64 torch leaves, by state-dict name."""
    return {name: torch.tensor(p.data, requires_grad=True) for name, p in module.named_parameters()}


def assert_grads_match(module, params):
    for name, p in module.named_parameters():
        np.testing.assert_allclose(p.grad, params[name].grad.numpy(), rtol=0, atol=TOL, err_msg=name)


def randomized(module, seed=0):
    perturb_parameters(module, np.random.default_rng(seed), scale=0.5)
    return module


# --- the blocks and models against the twin ------------------------------------------------------

BLOCKS = {
    "reordered layernorm": dict(position="reordered"),
    "reordered rmsnorm, QK-norm over the projection, soft-capped": dict(
        position="reordered", norm="rmsnorm", qk_norm="rmsnorm", qk_norm_scope="projection", attn_softcap=1.5),
    "pre, LayerNorm Scaling l=4, QK-norm per head": dict(norm_scale="depth", layer_index=4, qk_norm="layernorm"),
    "post, QK-norm over the projection (layernorm)": dict(position="post", qk_norm="layernorm",
                                                         qk_norm_scope="projection"),
}


@pytest.mark.parametrize("options", BLOCKS.values(), ids=BLOCKS.keys())
def test_the_block_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(1)
    block = randomized(nc.TransformerBlock(6, 2, 8, rng=0, **options))
    x, dy = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    y = block(x)
    dx = block.backward(dy)
    params, xt = torch_params(block), torch.tensor(x, requires_grad=True)
    yt = t_block(xt, {"." + name: p for name, p in params.items()}, "", block)  # names without a prefix
    (yt * torch.tensor(dy)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=0, atol=TOL)
    assert_grads_match(block, params)


@pytest.mark.parametrize("options", [dict(position="reordered", attn_softcap=2.0, qk_norm="rmsnorm",
                                          qk_norm_scope="projection"),
                                     dict(norm_scale="depth", layer_index=2)], ids=["reordered", "scaled"])
def test_the_decoder_block_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(2)
    block = randomized(nc.TransformerDecoderBlock(4, 2, 6, rng=0, **options))
    x, memory, dy = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 3, 4))
    y = block(x, memory)
    dx, dmemory = block.backward(dy)
    params = {"." + name: p for name, p in torch_params(block).items()}
    xt, mt = torch.tensor(x, requires_grad=True), torch.tensor(memory, requires_grad=True)
    yt = t_decoder_block(xt, mt, params, "", block)
    (yt * torch.tensor(dy)).sum().backward()
    np.testing.assert_allclose(y, yt.detach().numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dx, xt.grad.numpy(), rtol=0, atol=TOL)
    np.testing.assert_allclose(dmemory, mt.grad.numpy(), rtol=0, atol=TOL)
    for name, p in block.named_parameters():
        np.testing.assert_allclose(p.grad, params["." + name].grad.numpy(), rtol=0, atol=TOL, err_msg=name)


MODELS = {
    "mix of 4, soft-capped logits": dict(position="mix", logit_softcap=3.0),
    "reordered, QK-norm over the projection": dict(position="reordered", norm="rmsnorm", qk_norm="rmsnorm",
                                                   qk_norm_scope="projection"),
    "LayerNorm Scaling": dict(norm_scale="depth", attn_softcap=2.0),
}


@pytest.mark.parametrize("options", MODELS.values(), ids=MODELS.keys())
def test_the_model_matches_its_torch_twin_with_every_gradient(options):
    rng = np.random.default_rng(3)
    model = randomized(nc.TinyTransformer(7, 4, 4, 2, 5, d_ff=6, rng=0, **options))
    tokens = rng.integers(0, 7, (2, 5))
    logits = model(tokens)
    dlogits = rng.standard_normal(logits.shape)
    model.backward(dlogits)
    params = torch_params(model)
    lt = t_lm(torch.tensor(tokens), params, model)
    (lt * torch.tensor(dlogits)).sum().backward()
    np.testing.assert_allclose(logits, lt.detach().numpy(), rtol=0, atol=TOL)
    assert_grads_match(model, params)


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
