"""The Transformer block in every norm position and the TinyTransformer model."""

import numpy as np
import pytest

import normcore as nc
from normcore import nn
from normcore.layer_cases import perturb_parameters

POSITIONS = ["pre", "post", "deepnorm", "none", "peri"]
NORMS = ["layernorm", "rmsnorm"]


def tiny_model(position, norm, seed=0, **kw):
    model = nc.TinyTransformer(vocab_size=5, d_model=4, n_layers=2, n_heads=2, max_len=4, d_ff=6,
                               norm=norm, position=position, rng=seed, **kw)
    return perturb_parameters(model, np.random.default_rng(seed + 100))


@pytest.mark.slow  # gradchecks a whole two-block model, about a second each
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("position", POSITIONS)
def test_gradcheck_two_block_model(position, norm):
    model = tiny_model(position, norm)
    tokens = np.random.default_rng(1).integers(0, 5, (2, 4))
    report = nc.gradcheck(model, tokens, seed=2)
    assert report.passed, report.table()
    assert len(report.checks) == len(model.parameters())


@pytest.mark.parametrize("position", POSITIONS)
def test_gradcheck_block_with_dropout_uses_its_cached_masks(position):
    block = perturb_parameters(nc.TransformerBlock(4, 2, 6, position=position, dropout=0.4, n_layers=3, rng=0),
                               np.random.default_rng(0))
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    report = nc.gradcheck(block, x, seed=3)
    assert report.passed, report.table()
    # Two forwards draw different masks, so the output changes in training and not in eval.
    assert not np.allclose(block(x), block(x))
    block.eval()
    np.testing.assert_array_equal(block(x), block(x))


def test_block_forward_formulas_by_position():
    """Rebuild each position's output from the block's own sub-modules, as in the docstring."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 8))
    for position in POSITIONS:
        b = perturb_parameters(nc.TransformerBlock(8, 2, position=position, n_layers=4, rng=1), rng)
        y = b(x)
        a = b.alpha
        if position == "pre":
            h = x + b.attn(b.norm1(x))
            expect = h + b.ffn(b.norm2(h))
        elif position == "none":
            h = x + b.attn(x)
            expect = h + b.ffn(h)
        elif position == "peri":
            h = x + b.norm1_out(b.attn(b.norm1(x)))
            expect = h + b.norm2_out(b.ffn(b.norm2(h)))
        else:
            h = b.norm1(a * x + b.attn(x))
            expect = b.norm2(a * h + b.ffn(h))
        np.testing.assert_allclose(y, expect, rtol=1e-12, err_msg=position)


def test_deepnorm_constants_and_initial_gain():
    alpha, beta = nn.deepnorm_constants(6)
    assert np.isclose(alpha, 12 ** 0.25) and np.isclose(beta, 48 ** -0.25)
    deep = nc.TransformerBlock(64, 4, position="deepnorm", n_layers=6, rng=0)
    post = nc.TransformerBlock(64, 4, position="post", n_layers=6, rng=0)
    assert deep.alpha == alpha and post.alpha == 1.0
    for name in ["attn.v.weight", "attn.o.weight", "ffn.fc1.weight", "ffn.fc2.weight"]:
        ratio = dict(deep.named_parameters())[name].data.std() / dict(post.named_parameters())[name].data.std()
        assert np.isclose(ratio, beta, rtol=1e-12), name
    for name in ["attn.q.weight", "attn.k.weight"]:
        np.testing.assert_array_equal(dict(deep.named_parameters())[name].data,
                                      dict(post.named_parameters())[name].data)
    with pytest.raises(ValueError, match="n_layers"):
        nc.TransformerBlock(8, 2, position="deepnorm")


def test_pre_norm_identity_path_carries_the_gradient_through():
    """With the sub-layers' outputs zeroed, a Pre-Norm block is the identity and so is its backward;
    a Post-Norm block with the same zeroing is a norm, whose backward is not the identity."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal((2, 3, 8)), rng.standard_normal((2, 3, 8))
    for position, identity in [("pre", True), ("post", False)]:
        b = nc.TransformerBlock(8, 2, position=position, rng=0)
        for lin in (b.attn.o, b.ffn.fc2):
            lin.weight.data[...] = 0
        y = b(x)
        dx = b.backward(dy)
        assert np.allclose(y, x) == identity and np.allclose(dx, dy) == identity, position


def test_block_argument_errors():
    with pytest.raises(ValueError, match="position must be one of"):
        nc.TransformerBlock(8, 2, position="middle")
    with pytest.raises(ValueError, match="norm must be one of"):
        nc.TransformerBlock(8, 2, norm="batchnorm")
    with pytest.raises(ValueError, match="divisible"):
        nc.TransformerBlock(10, 3)
    with pytest.raises(ValueError, match=r"\(B, T, 8\)"):
        nc.TransformerBlock(8, 2)(np.zeros((2, 3, 7)))


def test_model_shapes_state_dict_and_blocks():
    model = nc.TinyTransformer(11, 8, 3, 2, 16, rng=0)
    tokens = np.random.default_rng(0).integers(0, 11, (4, 10))
    logits = model(tokens)
    assert logits.shape == (4, 10, 11) and logits.dtype == np.float64
    assert len(model.blocks) == 3 and all(isinstance(b, nc.TransformerBlock) for b in model.blocks)
    keys = list(model.state_dict())
    assert keys[:3] == ["tok_emb.weight", "pos_emb.weight", "blocks.0.norm1.weight"]
    assert "blocks.2.attn.q.weight" in keys and keys[-2:] == ["head.weight", "head.bias"]
    assert "norm_f.weight" in keys
    assert "norm_f.weight" not in nc.TinyTransformer(11, 8, 3, 2, 16, position="post").state_dict()
    assert model.backward(np.random.default_rng(1).standard_normal(logits.shape)) is None
    assert all(np.any(p.grad != 0) for p in model.parameters())


def test_model_state_dict_round_trip_gives_the_same_logits():
    tokens = np.random.default_rng(0).integers(0, 7, (2, 5))
    a = nc.TinyTransformer(7, 8, 2, 2, 8, position="deepnorm", norm="rmsnorm", rng=0)
    b = nc.TinyTransformer(7, 8, 2, 2, 8, position="deepnorm", norm="rmsnorm", rng=1)
    assert not np.allclose(a(tokens), b(tokens))
    b.load_state_dict(a.state_dict())
    np.testing.assert_array_equal(a(tokens), b(tokens))


def test_model_input_errors():
    model = nc.TinyTransformer(6, 8, 1, 2, 5, rng=0)
    with pytest.raises(ValueError, match="vocabulary of size 6"):
        model(np.array([[0, 6]]))
    with pytest.raises(ValueError, match="size 6"):
        model(np.array([[-1, 2]]))
    with pytest.raises(ValueError, match=r"TinyTransformer: expected a sequence length T <= max_len=5, got T=6"):
        model(np.zeros((1, 6), dtype=int))
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        model(np.zeros(3, dtype=int))
    with pytest.raises(TypeError, match="integer"):
        model(np.zeros((1, 3)))


def test_float32_model_stays_float32():
    model = nc.TinyTransformer(6, 8, 2, 2, 5, dtype=np.float32, rng=0)
    tokens = np.random.default_rng(0).integers(0, 6, (2, 5))
    logits = model(tokens)
    assert logits.dtype == np.float32
    model.backward(np.ones_like(logits))
    assert all(p.grad.dtype == np.float32 for p in model.parameters())
    ref = nc.TinyTransformer(6, 8, 2, 2, 5, rng=0)
    ref.load_state_dict(model.state_dict())
    np.testing.assert_allclose(logits, ref(tokens), rtol=1e-4, atol=1e-4)


def test_activation_and_embedding_std_reach_every_block():
    model = nc.TinyTransformer(7, 8, 2, 2, 5, activation="relu", embedding_std=0.02, rng=0)
    assert all(isinstance(block.ffn.act, nc.ReLU) for block in model.blocks)
    assert 0.01 < model.tok_emb.weight.data.std() < 0.03
    with pytest.raises(ValueError, match="activation must be one of"):
        nc.TransformerBlock(8, 2, activation="swish")


@pytest.mark.parametrize("position", ["pre", "post", "deepnorm"])
@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
def test_the_fast_norm_tier_gives_the_same_model(position, norm):
    """norm_tier="fast" builds the same model with normcore.fast's norms: same state dict keys,
    the same logits and every gradient to float64 rounding."""
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 11, (2, 5))
    dlogits = rng.standard_normal((2, 5, 11))
    models = {tier: nc.TinyTransformer(11, 8, 2, 2, 5, norm=norm, position=position, rng=4, norm_tier=tier)
              for tier in ("reference", "fast")}
    fast_norms = [m for _, m in models["fast"].named_modules() if isinstance(m, (nc.LayerNorm, nc.RMSNorm))]
    assert fast_norms and all(type(m).__module__.startswith("normcore.fast") for m in fast_norms)
    assert list(models["fast"].state_dict()) == list(models["reference"].state_dict())
    for m in models.values():
        for p in m.parameters():  # non-trivial gamma and beta
            p.data += 0.1 * rng.standard_normal(p.shape)
    models["fast"].load_state_dict(models["reference"].state_dict())
    logits = {t: m(tokens) for t, m in models.items()}
    np.testing.assert_allclose(logits["fast"], logits["reference"], rtol=1e-12, atol=1e-12)
    for m in models.values():
        m.backward(dlogits)
    grads = {t: dict(m.named_parameters()) for t, m in models.items()}
    for name, p in grads["reference"].items():
        np.testing.assert_allclose(grads["fast"][name].grad, p.grad, rtol=1e-10, atol=1e-12, err_msg=name)


def test_norm_tier_must_be_known():
    with pytest.raises(ValueError, match=r"norm_tier must be one of \('reference', 'fast'\)"):
        nc.TransformerBlock(8, 2, norm_tier="quick")


# --- the block as an encoder layer: causal=False, masks, bias=False ---------------------------

class BlockWithMasks(nc.Module):
    """A block with its masks fixed as attributes, so gradcheck differentiates x only."""

    def __init__(self, block, key_padding_mask=None, attn_mask=None):
        self.block, self.key_padding_mask, self.attn_mask = block, key_padding_mask, attn_mask

    def forward(self, x):
        return self.block(x, self.key_padding_mask, self.attn_mask)

    def backward(self, dy):
        return self.block.backward(dy)


PADDING = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0], [0, 1, 1, 1, 1]], dtype=bool)


def encoder_block(position="pre", norm="layernorm", seed=0, **kw):
    block = nc.TransformerBlock(8, 2, 12, norm, position, n_layers=2, rng=seed, causal=False, **kw)
    return perturb_parameters(block, np.random.default_rng(seed + 1))


@pytest.mark.slow  # gradchecks an encoder block per position and norm, seconds each
@pytest.mark.parametrize("position, norm, bias", [(p, n, True) for p in POSITIONS for n in NORMS]
                         + [("pre", "layernorm", False), ("post", "rmsnorm", False)])
def test_gradcheck_encoder_block_with_masks(position, norm, bias):
    rng = np.random.default_rng(3)
    attn_mask = np.where(rng.random((5, 5)) < 0.3, -np.inf, rng.standard_normal((5, 5)))
    attn_mask[:, 0] = 0.0  # every query keeps key 0, the one key no sequence pads
    block = encoder_block(position, norm, bias=bias, activation="relu" if bias else "gelu")
    report = nc.gradcheck(BlockWithMasks(block, PADDING, attn_mask), rng.standard_normal((3, 5, 8)))
    assert report.passed, report.table()
    assert len(report.checks) == 1 + len(block.parameters())


def test_causal_false_lets_a_position_see_the_future_and_causal_true_does_not():
    x = np.random.default_rng(0).standard_normal((2, 5, 8))
    x2 = x.copy()
    x2[:, 3:] += np.random.default_rng(1).standard_normal((2, 2, 8))  # change positions 3 and 4 only
    encoder = encoder_block()
    decoder = perturb_parameters(nc.TransformerBlock(8, 2, 12, rng=0), np.random.default_rng(1))
    assert decoder.attn.causal and not encoder.attn.causal and isinstance(decoder.attn, nc.CausalSelfAttention)
    np.testing.assert_allclose(decoder(x2)[:, :3], decoder(x)[:, :3], rtol=1e-13, atol=1e-13)
    assert not np.allclose(encoder(x2)[:, :3], encoder(x)[:, :3])
    future = np.triu(np.ones((5, 5), dtype=bool), k=1)
    for (_, p), (_, p2) in zip(encoder.named_parameters(), decoder.named_parameters()):
        p2.data[...] = p.data
    np.testing.assert_array_equal(encoder(x, attn_mask=future), decoder(x))


def test_a_masked_padding_token_does_not_change_the_real_tokens():
    block = encoder_block("post")
    x = np.random.default_rng(2).standard_normal((3, 5, 8))
    x2 = x.copy()
    x2[PADDING] += 5.0  # change only the padding tokens
    y, y2 = block(x, PADDING), block(x2, PADDING)
    np.testing.assert_allclose(y2[~PADDING], y[~PADDING], rtol=1e-12, atol=1e-12)


def test_bias_false_drops_every_bias():
    block = nc.TransformerBlock(8, 2, causal=False, bias=False, rng=0)
    assert [k for k in block.state_dict() if "bias" in k] == []
    rms = nc.TransformerBlock(8, 2, norm="rmsnorm", bias=False, rng=0)
    assert [k for k in rms.state_dict() if "bias" in k] == []


@pytest.mark.parametrize("kwargs, error, words", [
    ({"key_padding_mask": np.zeros((3, 4), dtype=bool)}, ValueError, "key_padding_mask must have shape (3, 5)"),
    ({"attn_mask": np.zeros((5, 5), dtype=int)}, TypeError, "attn_mask must be boolean"),
    ({"attn_mask": np.zeros((3, 2, 5, 4))}, ValueError, "(5, 5) or (6, 5, 5) or (3, 2, 5, 5)"),
])
@pytest.mark.parametrize("position", ["pre", "post"])
def test_bad_masks_raise_before_any_sub_layer_runs(position, kwargs, error, words):
    """norm1 runs before the attention in a Pre-Norm block: the masks are checked first, so a
    bad mask leaves every cache as the last good forward left it."""
    block = encoder_block(position)
    rng = np.random.default_rng(4)
    x, dy = rng.standard_normal((3, 5, 8)), rng.standard_normal((3, 5, 8))
    block(x, PADDING)
    with pytest.raises(error) as info:
        block(rng.standard_normal((3, 5, 8)), **kwargs)
    assert words in str(info.value)
    expected = encoder_block(position)
    expected(x, PADDING)
    np.testing.assert_array_equal(block.backward(dy), expected.backward(dy))


@pytest.mark.parametrize("layout", ["F", "transposed", "sliced"])
def test_encoder_block_takes_any_memory_layout(layout):
    rng = np.random.default_rng(5)
    x, dy = rng.standard_normal((3, 5, 8)), rng.standard_normal((3, 5, 8))
    if layout == "F":
        laid = np.asfortranarray(x)
    elif layout == "transposed":
        laid = np.ascontiguousarray(x.transpose(2, 0, 1)).transpose(1, 2, 0)
    else:
        big = np.zeros((6, 5, 16))
        big[::2, :, ::2] = x
        laid = big[::2, :, ::2]
    padding = np.asfortranarray(PADDING)
    block, expected = encoder_block(), encoder_block()  # the same numbers up to BLAS's rounding by layout
    np.testing.assert_allclose(block(laid, padding), expected(x, PADDING), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(block.backward(dy), expected.backward(dy), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 5, 8), (3, 0, 8)])
def test_encoder_block_with_zero_size_input(shape):
    block = encoder_block("post")
    y = block(np.zeros(shape), np.zeros(shape[:2], dtype=bool))
    assert y.shape == shape
    assert block.backward(np.zeros(shape)).shape == shape
