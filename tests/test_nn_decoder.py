"""The Transformer decoder block (causal self-attention, cross-attention to a memory, feed-forward)
in every norm position: gradients, formulas, masks, layouts, empty inputs and bad inputs."""

import copy
import warnings

import numpy as np
import pytest

import normcore as nc
from normcore import nn
from normcore.layer_cases import perturb_parameters

POSITIONS = ["pre", "post", "deepnorm", "none", "peri"]
NORMS = ["layernorm", "rmsnorm"]


def block(position="pre", norm="layernorm", seed=0, **kw):
    kw = {"d_ff": 6, "n_layers": 2, **kw}
    b = nc.TransformerDecoderBlock(4, 2, norm=norm, position=position, rng=seed, **kw)
    return perturb_parameters(b, np.random.default_rng(seed + 100))


def inputs(B=2, Tt=3, Ts=5, C=4, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((B, Tt, C)), rng.standard_normal((B, Ts, C))


@pytest.mark.slow  # gradchecks a decoder block per position and norm, seconds each
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("position", POSITIONS)
def test_gradcheck_target_memory_and_every_parameter(position, norm):
    b = block(position, norm)
    x, memory = inputs()
    report = nc.gradcheck(b, x, memory, seed=2)  # a random upstream gradient
    assert report.passed, report.table()
    assert {"x0", "x1"} <= set(report.errors)  # x and memory
    assert len(report.checks) == 2 + len(b.parameters())


@pytest.mark.parametrize("position", POSITIONS)
def test_gradcheck_with_every_mask_and_dropout(position):
    b = block(position, dropout=0.3)
    x, memory = inputs(Tt=4, Ts=5)
    tgt_kpm = np.array([[False] * 4, [False, False, False, True]])
    mem_kpm = np.array([[False, False, False, True, True], [False] * 5])
    tgt_mask = np.random.default_rng(3).standard_normal((4, 4))  # a floating bias on top of causality
    memory_mask = np.zeros((4, 5), dtype=bool)
    memory_mask[0, 1] = memory_mask[2, 0] = True

    class Masked(nc.Module):  # the block with its masks held fixed, so gradcheck sees (x, memory)
        def __init__(self):
            self.b = b

        def forward(self, x, memory):
            return self.b(x, memory, tgt_kpm, mem_kpm, tgt_mask, memory_mask)

        def backward(self, dy):
            return self.b.backward(dy)

    report = nc.gradcheck(Masked(), x, memory, seed=4)
    assert report.passed, report.table()


def test_forward_formulas_by_position():
    """Rebuild each position's output from the block's own children, as in the docstring."""
    x, memory = inputs(B=2, Tt=3, Ts=4, C=8, seed=5)
    for position in POSITIONS:
        b = perturb_parameters(nc.TransformerDecoderBlock(8, 2, position=position, n_layers=4, rng=1),
                               np.random.default_rng(0))
        y = b(x, memory)
        a = b.alpha

        def ca(h, b=b):
            return b.cross_attn(h, memory, memory)

        if position == "pre":
            h1 = x + b.self_attn(b.norm1(x))
            h2 = h1 + ca(b.norm2(h1))
            expect = h2 + b.ffn(b.norm3(h2))
        elif position == "none":
            h1 = x + b.self_attn(x)
            h2 = h1 + ca(h1)
            expect = h2 + b.ffn(h2)
        elif position == "peri":
            h1 = x + b.norm1_out(b.self_attn(b.norm1(x)))
            h2 = h1 + b.norm2_out(ca(b.norm2(h1)))
            expect = h2 + b.norm3_out(b.ffn(b.norm3(h2)))
        else:
            h1 = b.norm1(a * x + b.self_attn(x))
            h2 = b.norm2(a * h1 + ca(h1))
            expect = b.norm3(a * h2 + b.ffn(h2))
        np.testing.assert_allclose(y, expect, rtol=1e-12, atol=1e-12, err_msg=position)


def test_the_memory_gradient_is_the_cross_attentions_key_plus_value_gradient():
    b = block("post")
    x, memory = inputs()
    b(x, memory)
    seen = []
    cross_backward = b.cross_attn.backward
    b.cross_attn.backward = lambda dy: seen.append(cross_backward(dy)) or seen[-1]  # record (dq, dk, dv)
    _, dmemory = b.backward(np.random.default_rng(6).standard_normal(x.shape))
    _, dkey, dvalue = seen[0]
    np.testing.assert_array_equal(dmemory, dkey + dvalue)
    assert not np.allclose(dkey, 0) and not np.allclose(dvalue, 0)


def test_self_attention_is_causal_and_padded_memory_is_ignored():
    b = block("pre")
    x, memory = inputs(Tt=4, Ts=5)
    y = b(x, memory)
    later = x.copy()
    later[:, 2:] += 1.0  # change the future: positions 0 and 1 do not see it
    np.testing.assert_allclose(b(later, memory)[:, :2], y[:, :2], rtol=1e-12, atol=1e-12)
    assert not np.allclose(b(later, memory)[:, 2:], y[:, 2:])
    pad = np.array([[False, False, False, True, True]] * 2)
    y = b(x, memory, memory_key_padding_mask=pad)
    changed = memory.copy()
    changed[:, 3:] = 7.0  # padding keys and values: masked out of the cross-attention
    np.testing.assert_allclose(b(x, changed, memory_key_padding_mask=pad), y, rtol=1e-12, atol=1e-12)
    b.backward(np.ones_like(y))
    _, dmemory = b.backward(np.random.default_rng(0).standard_normal(y.shape))
    np.testing.assert_array_equal(dmemory[:, 3:], 0.0)


def test_deepnorm_uses_the_decoder_constants_of_three_sub_layers():
    alpha, beta = nn.deepnorm_constants(6, sublayers=3)
    assert np.isclose(alpha, 18 ** 0.25) and np.isclose(beta, 72 ** -0.25)
    assert nn.deepnorm_constants(6) == nn.deepnorm_constants(6, sublayers=2)
    deep = nc.TransformerDecoderBlock(64, 4, position="deepnorm", n_layers=6, rng=0)
    post = nc.TransformerDecoderBlock(64, 4, position="post", n_layers=6, rng=0)
    assert deep.alpha == alpha and post.alpha == 1.0
    params = {name: dict(m.named_parameters()) for name, m in (("deep", deep), ("post", post))}
    for name in ["self_attn.v.weight", "self_attn.o.weight", "cross_attn.v.weight", "cross_attn.o.weight",
                 "ffn.fc1.weight", "ffn.fc2.weight"]:
        ratio = params["deep"][name].data.std() / params["post"][name].data.std()
        assert np.isclose(ratio, beta, rtol=1e-12), name
    for name in ["self_attn.q.weight", "self_attn.k.weight", "cross_attn.q.weight", "cross_attn.k.weight"]:
        np.testing.assert_array_equal(params["deep"][name].data, params["post"][name].data)
    with pytest.raises(ValueError, match="n_layers"):
        nc.TransformerDecoderBlock(8, 2, position="deepnorm")


def test_children_and_state_dict_keys():
    b = nc.TransformerDecoderBlock(8, 2, rng=0)
    assert [name for name, _ in b.named_modules() if name and "." not in name] == [
        "norm1", "self_attn", "norm2", "cross_attn", "norm3", "ffn", "drop1", "drop2", "drop3"]
    keys = list(b.state_dict())
    assert keys[:2] == ["norm1.weight", "norm1.bias"] and "cross_attn.k.weight" in keys
    assert "norm1.weight" not in nc.TransformerDecoderBlock(8, 2, position="none", rng=0).state_dict()
    c = nc.TransformerDecoderBlock(8, 2, rng=1)
    x, memory = inputs(C=8)
    assert not np.allclose(b(x, memory), c(x, memory))
    c.load_state_dict(b.state_dict())
    np.testing.assert_array_equal(b(x, memory), c(x, memory))


@pytest.mark.parametrize("layout", ["fortran", "strided", "transposed"])
def test_non_contiguous_inputs_give_the_same_output_and_gradients(layout):
    x, memory = inputs(Tt=3, Ts=5)
    if layout == "fortran":
        xs, ms = np.asfortranarray(x), np.asfortranarray(memory)
    elif layout == "strided":
        xs = np.repeat(x, 2, axis=2)[:, :, ::2]
        ms = np.repeat(memory, 2, axis=1)[:, ::2]
    else:
        xs = np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)
        ms = np.ascontiguousarray(memory.transpose(1, 0, 2)).transpose(1, 0, 2)
    assert not xs.flags.c_contiguous and not ms.flags.c_contiguous
    dy = np.random.default_rng(7).standard_normal(x.shape)
    out = []
    for a, m in ((x, memory), (xs, ms)):
        b = block("pre")
        y = b(a, m)
        out.append((y, *b.backward(dy), *[p.grad for p in b.parameters()]))
    for got, want in zip(out[1], out[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("shape_x, shape_m", [((0, 3, 4), (0, 5, 4)), ((2, 0, 4), (2, 5, 4)), ((2, 3, 4), (2, 0, 4))])
def test_zero_size_inputs_give_outputs_and_gradients_of_their_shapes(position, shape_x, shape_m):
    b = block(position)
    x, memory = np.zeros(shape_x), np.ones(shape_m)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")  # no "empty slice" RuntimeWarning either
        y = b(x, memory)
        dx, dmemory = b.backward(np.zeros(shape_x))
    assert y.shape == dx.shape == shape_x and dmemory.shape == shape_m
    np.testing.assert_array_equal(dmemory, 0.0)
    assert all(np.all(p.grad == 0) for p in b.parameters())


def test_float32_stays_float32_and_each_gradient_has_its_inputs_dtype():
    b = block("post")
    x, memory = inputs()
    y = b.to(np.float32)(x.astype(np.float32), memory)  # memory float64, computed in the target's dtype
    assert y.dtype == np.float32
    dx, dmemory = b.backward(np.ones_like(y, dtype=np.float64))
    assert dx.dtype == np.float32 and dmemory.dtype == np.float64
    assert all(p.grad.dtype == np.float32 for p in b.parameters())


def test_nothing_cached_is_shared_with_the_caller():
    b = block("pre", dropout=0.2)
    x, memory = inputs()
    dy = np.random.default_rng(8).standard_normal(x.shape)
    y = b(x, memory)
    dx, dmemory = b.backward(dy)
    ref = block("pre", dropout=0.2)
    ref(x.copy(), memory.copy())
    ref_dx, ref_dmemory = ref.backward(dy.copy())
    b2 = block("pre", dropout=0.2)
    y2 = b2(x, memory)
    x[...], memory[...], y2[...] = 5.0, -3.0, 9.0  # the caller reuses its buffers
    dx2, dmemory2 = b2.backward(dy)
    np.testing.assert_allclose(dx2, ref_dx, rtol=1e-12)
    np.testing.assert_allclose(dmemory2, ref_dmemory, rtol=1e-12)
    held = [x, memory, y, dx, dmemory, dy]
    for _, mod in b.named_modules():
        cache = mod.__dict__.get("_cache")
        for a in (cache if isinstance(cache, tuple) else (cache,)):
            if isinstance(a, np.ndarray):
                assert not any(np.shares_memory(a, h) for h in held), type(mod).__name__


BAD_CALLS = [
    (lambda x, m: (x[..., :3], m), ValueError, r"target x of shape \(B, Tt, 4\)"),
    (lambda x, m: (x, m[..., :3]), ValueError, r"memory of shape \(B, Ts, 4\) with the target's B = 2"),
    (lambda x, m: (x, m[:1]), ValueError, "with the target's B = 2"),
    (lambda x, m: (x.astype(int), m), TypeError, "floating-point"),
    (lambda x, m: (x, m.astype(int)), TypeError, r"\(memory\) expects a floating-point"),
    (lambda x, m: (x, m, np.zeros((2, 4), bool)), ValueError,
     r"tgt_key_padding_mask and tgt_mask are the self-attention's key_padding_mask and attn_mask: .*"
     r"key_padding_mask must have shape \(2, 3\)"),
    (lambda x, m: (x, m, None, np.zeros((2, 5), int)), TypeError,
     r"memory_key_padding_mask and memory_mask are the cross-attention's .*key_padding_mask must be boolean"),
    (lambda x, m: (x, m, None, None, np.zeros((3, 4))), ValueError,
     r"self-attention's .* attn_mask must have shape \(3, 3\) or \(4, 3, 3\) or \(2, 2, 3, 3\)"),
    (lambda x, m: (x, m, None, None, None, np.zeros((3, 3), bool)), ValueError,
     r"cross-attention's .* attn_mask must have shape \(3, 5\) or \(4, 3, 5\) or \(2, 2, 3, 5\)"),
]


@pytest.mark.parametrize("make, error, message", BAD_CALLS)
def test_a_bad_input_is_refused_and_changes_nothing(make, error, message):
    b = block("pre", dropout=0.3)
    x, memory = inputs()
    y = b(x, memory)
    state = copy.deepcopy(b.__dict__)
    with pytest.raises(error, match=message):
        b(*make(x, memory))
    dy = np.random.default_rng(9).standard_normal(y.shape)
    ref = copy.deepcopy(b)
    ref.__dict__.update(copy.deepcopy(state))
    got, want = b.backward(dy), ref.backward(dy)  # the caches of the good call are intact
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(b(x, memory), ref(x, memory))  # the same Dropout draws follow


def test_bad_arguments_and_backward_before_forward():
    with pytest.raises(ValueError, match="position must be one of"):
        nc.TransformerDecoderBlock(8, 2, position="middle")
    with pytest.raises(ValueError, match="norm must be one of"):
        nc.TransformerDecoderBlock(8, 2, norm="batchnorm")
    with pytest.raises(TypeError, match="d_ff must be an int"):
        nc.TransformerDecoderBlock(8, 2, d_ff=8.5)
    with pytest.raises(ValueError, match="dropout must be in"):
        nc.TransformerDecoderBlock(8, 2, dropout=1.5)
    with pytest.raises(ValueError, match="divisible"):
        nc.TransformerDecoderBlock(10, 3)
    with pytest.raises(RuntimeError, match="before forward"):
        nc.TransformerDecoderBlock(8, 2).backward(np.zeros((1, 2, 8)))
    b = block()
    x, memory = inputs()
    b(x, memory)
    with pytest.raises(ValueError, match=r"upstream gradient of the output's shape \(2, 3, 4\)"):
        b.backward(np.zeros((2, 5, 4)))


def test_bias_false_drops_every_bias_and_still_checks():
    b = perturb_parameters(nc.TransformerDecoderBlock(4, 2, 6, position="post", bias=False, rng=0),
                           np.random.default_rng(0))
    assert not [k for k in b.state_dict() if k.endswith("bias")]
    report = nc.gradcheck(b, *inputs(), seed=5)
    assert report.passed, report.table()
    with pytest.raises(TypeError, match="bias must be True or False"):
        nc.TransformerDecoderBlock(4, 2, bias="False")


def test_causal_false_lets_every_target_position_see_the_later_ones():
    rng = np.random.default_rng(5)
    x, memory = rng.standard_normal((2, 4, 8)), rng.standard_normal((2, 3, 8))
    later = x.copy()
    later[:, -1] += rng.standard_normal(8)  # only the last target position changes (not by a constant:
    # the norm would hide a shift)
    for causal in (True, False):
        block = nc.TransformerDecoderBlock(8, 2, 16, causal=causal, rng=1)
        assert block.self_attn.causal is causal
        moved = np.abs(block(later, memory) - block(x, memory))[:, 0].max()
        assert (moved == 0) if causal else (moved > 1e-3)  # position 0 sees position 3 only without the mask
    with pytest.raises(TypeError, match="causal must be True or False"):
        nc.TransformerDecoderBlock(8, 2, causal="False")
