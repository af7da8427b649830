"""TransformerDecoderBlock against torch.nn.TransformerDecoderLayer, and TinySeq2Seq against the
same model assembled from torch.nn layers, to 1e-10 in float64: the output, the target's and the
memory's gradients and every parameter's gradient, with and without masks.

torch's decoder layer is not causal by itself (``tgt_is_causal`` is only a hint that
``tgt_mask`` is the causal mask); normcore's self-attention is causal by construction. So the
torch side always gets the causal mask as ``tgt_mask`` (merged with any extra one).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the parity tests compare with PyTorch")

import normcore as nc  # noqa: E402
from normcore import torch_bridge  # noqa: E402
from normcore.layer_cases import perturb_parameters  # noqa: E402

B, TT, TS, E, H, FF = 3, 4, 5, 8, 2, 16


def rel(a, b):
    return nc.rel_error(a, b.detach().numpy() if hasattr(b, "detach") else b)


def masks(kind):
    """(tgt_key_padding_mask, memory_key_padding_mask, tgt_mask, memory_mask) in normcore's
    convention; tgt_mask is what is added on top of causality."""
    rng = np.random.default_rng(11)
    tgt_kpm = np.zeros((B, TT), dtype=bool)
    tgt_kpm[0, 3:] = True  # query 0 always keeps itself as a key
    mem_kpm = np.zeros((B, TS), dtype=bool)
    mem_kpm[0, 3:] = True
    mem_kpm[2, 1:] = True  # one real source token
    memory_mask = (rng.random((TT, TS)) < 0.3) & ~np.eye(TT, TS, dtype=bool)
    tgt_bias = 0.5 * rng.standard_normal((TT, TT))
    return {
        "none": (None, None, None, None),
        "tgt padding": (tgt_kpm, None, None, None),
        "memory padding": (None, mem_kpm, None, None),
        "memory mask": (None, None, None, memory_mask),
        "float tgt mask": (None, None, tgt_bias, None),
        "all": (tgt_kpm, mem_kpm, None, memory_mask),
    }[kind]


def torch_layer(block):
    """A genuine torch.nn.TransformerDecoderLayer with ``block``'s weights (placed by
    ``torch_bridge.decoder_keys``)."""
    act = {"relu": "relu", "gelu": "gelu"}[type(block.ffn.act).__name__.lower()]
    t = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, activation=act, batch_first=True,
                                         norm_first=block.position == "pre", bias=block.bias).double()
    state = {k: torch.zeros_like(v) for k, v in t.state_dict().items()}
    for key, value in block.state_dict().items():
        tkey, rows = torch_bridge.decoder_keys(block)[key]
        state[tkey][rows] = torch.from_numpy(value)
    t.load_state_dict(state, strict=True)
    return t


def causal_tgt_mask(extra):
    """torch's tgt_mask for normcore's causal self-attention, plus normcore's own tgt_mask."""
    causal = torch.ones(TT, TT, dtype=torch.bool).triu(1)
    if extra is None:
        return causal
    return torch.zeros(TT, TT, dtype=torch.float64).masked_fill(causal, -torch.inf) + torch.from_numpy(extra)


def run_both(block, tlayer, kind, seed=0):
    tgt_kpm, mem_kpm, tgt_mask, memory_mask = masks(kind)
    rng = np.random.default_rng(seed)
    x, memory, dy = rng.standard_normal((B, TT, E)), rng.standard_normal((B, TS, E)), rng.standard_normal((B, TT, E))
    y = block(x, memory, tgt_kpm, mem_kpm, tgt_mask, memory_mask)
    dx, dmemory = block.backward(dy)
    tx, tm = torch.tensor(x, requires_grad=True), torch.tensor(memory, requires_grad=True)

    def t(a):
        return None if a is None else torch.from_numpy(a)

    ty = tlayer(tx, tm, tgt_mask=causal_tgt_mask(tgt_mask), memory_mask=t(memory_mask),
                tgt_key_padding_mask=t(tgt_kpm), memory_key_padding_mask=t(mem_kpm))
    ty.backward(torch.from_numpy(dy))
    return (y, dx, dmemory), (ty, tx.grad, tm.grad)


def assert_parameter_grads(block, tlayer, tol=1e-10):
    tgrads = {name: p.grad for name, p in tlayer.named_parameters()}
    keys = torch_bridge.decoder_keys(block)
    for name, p in block.named_parameters():
        tkey, rows = keys[name]
        assert rel(p.grad, tgrads[tkey][rows]) < tol, name
    bias_k = tgrads.get("self_attn.in_proj_bias")
    if bias_k is not None:  # torch's key bias, which normcore does not have: its gradient is 0 up to rounding
        assert float(bias_k[E:2 * E].abs().max()) < 1e-12


@pytest.mark.parametrize("kind", ["none", "tgt padding", "memory padding", "memory mask", "float tgt mask", "all"])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.parametrize("position", ["pre", "post"])
def test_decoder_block_matches_torch_decoder_layer(position, activation, kind):
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, position=position, activation=activation,
                                                          rng=0), np.random.default_rng(1), 0.3)
    tlayer = torch_layer(block)
    ours, theirs = run_both(block, tlayer, kind)
    for what, a, b in zip(("output", "dx", "dmemory"), ours, theirs):
        assert rel(a, b) < 1e-10, what
    assert_parameter_grads(block, tlayer)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_decoder_block_without_biases_matches_torch(position):
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, position=position, bias=False, rng=0),
                               np.random.default_rng(2), 0.3)
    tlayer = torch_layer(block)
    ours, theirs = run_both(block, tlayer, "all", seed=3)
    for a, b in zip(ours, theirs):
        assert rel(a, b) < 1e-10
    assert_parameter_grads(block, tlayer)


def test_torch_layer_without_the_causal_mask_is_not_causal():
    """The reason for the causal tgt_mask: without it, torch's first position sees the last."""
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, rng=0), np.random.default_rng(1), 0.3)
    tlayer = torch_layer(block)
    rng = np.random.default_rng(4)
    x, memory = torch.from_numpy(rng.standard_normal((B, TT, E))), torch.from_numpy(rng.standard_normal((B, TS, E)))
    y = block(x.numpy(), memory.numpy())
    assert rel(y, tlayer(x, memory, tgt_mask=causal_tgt_mask(None))) < 1e-10
    assert rel(y[:, 0], tlayer(x, memory)[:, 0]) > 1e-3
    assert rel(y, tlayer(x, memory, tgt_mask=causal_tgt_mask(None), tgt_is_causal=True)) < 1e-10
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        tlayer(x, memory, tgt_is_causal=True)  # the hint alone does not make it causal (torch 2.13)


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm"])
@pytest.mark.parametrize("position", ["pre", "post", "deepnorm", "none"])
def test_to_torch_builds_torchs_layer_where_it_can_and_a_twin_elsewhere(position, norm):
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, norm, position, n_layers=3, rng=0),
                               np.random.default_rng(5), 0.3)
    tblock = torch_bridge.to_torch(block)
    native = position in ("pre", "post") and norm == "layernorm"
    assert isinstance(tblock, torch.nn.TransformerDecoderLayer) == native
    if native:
        assert tblock.norm_first == (position == "pre")
    else:
        assert tblock.alpha == ((3 * 3) ** 0.25 if position == "deepnorm" else 1.0)  # DeepNet's decoder alpha, N = 3
    tgt_kpm, mem_kpm, _, memory_mask = masks("all")
    rng = np.random.default_rng(6)
    report = torch_bridge.compare(block, rng.standard_normal((B, TT, E)), rng.standard_normal((B, TS, E)),
                                  tgt_kpm, mem_kpm, None, memory_mask, out=None)
    assert [r.name for r in report.rows[:3]] == ["output", "input 0 grad", "input 1 grad"]  # x, memory
    assert len(report.rows) == 3 + len(block.parameters())
    assert max(r.max_abs for r in report.rows) < 1e-10, str(report)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_seq2seq_matches_the_model_assembled_from_torch_layers(position):
    """TinySeq2Seq against its to_torch twin: nn.Embedding, learned positions, nn.TransformerEncoderLayer
    (not causal, the source padding mask), nn.TransformerDecoderLayer (the causal tgt_mask, the same
    padding mask for the memory), nn.LayerNorm, nn.Linear; every parameter's gradient to 1e-10."""
    model = perturb_parameters(nc.TinySeq2Seq(9, 7, E, 2, H, TS, TT, d_ff=FF, position=position, rng=0,
                                              n_decoder_layers=2), np.random.default_rng(7), 0.2)
    tmodel = torch_bridge.to_torch(model)
    assert all(isinstance(b, torch.nn.TransformerEncoderLayer) for b in tmodel.encoder)
    assert all(isinstance(b, torch.nn.TransformerDecoderLayer) for b in tmodel.decoder)
    assert isinstance(tmodel.src_emb, torch.nn.Embedding) and isinstance(tmodel.head, torch.nn.Linear)
    rng = np.random.default_rng(8)
    src, tgt = rng.integers(0, 9, (B, TS)), rng.integers(0, 7, (B, TT))
    _, padding, _, _ = masks("all")
    for mask in (None, padding):
        report = torch_bridge.compare(model, src, tgt, mask, out=None)
        assert len(report.rows) == 1 + len(model.parameters())
        assert max(r.max_abs for r in report.rows) < 1e-10, str(report)
        assert report.passed


def test_from_torch_builds_a_non_causal_decoder_block_equal_to_torchs_layer():
    """torch's layer is not causal by itself: from_torch gives causal=False, and the two agree
    without a target mask and with the same causal mask given to both."""
    torch.manual_seed(0)
    tlayer = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, activation="gelu", batch_first=True,
                                              norm_first=False, layer_norm_eps=1e-3).double()
    with torch.no_grad():
        for p in tlayer.parameters():
            p.add_(0.3 * torch.randn_like(p))
    block = torch_bridge.from_torch(tlayer)
    assert isinstance(block, nc.TransformerDecoderBlock) and block.position == "post"
    assert block.self_attn.causal is False
    assert type(block.ffn.act).__name__ == "GELU" and block.norm3.eps == 1e-3
    future = np.triu(np.ones((TT, TT), dtype=bool), k=1)
    for tgt_mask in (None, future):
        block.zero_grad()
        tlayer.zero_grad()
        rng = np.random.default_rng(9)
        x, memory = rng.standard_normal((B, TT, E)), rng.standard_normal((B, TS, E))
        dy = rng.standard_normal((B, TT, E))
        y = block(x, memory, tgt_mask=tgt_mask)
        dx, dmemory = block.backward(dy)
        tx, tm = torch.tensor(x, requires_grad=True), torch.tensor(memory, requires_grad=True)
        ty = tlayer(tx, tm, tgt_mask=None if tgt_mask is None else torch.from_numpy(tgt_mask))
        ty.backward(torch.from_numpy(dy))
        for a, b in zip((y, dx, dmemory), (ty, tx.grad, tm.grad)):
            assert rel(a, b) < 1e-10
        assert_parameter_grads(block, tlayer)


@pytest.mark.parametrize("position, bias", [("pre", True), ("post", False)])
def test_from_torch_gives_back_the_decoder_block_to_torch_was_given(position, bias):
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, position=position, activation="relu", bias=bias,
                                                          dropout=0.1, rng=0), np.random.default_rng(3), 0.3)
    back = torch_bridge.from_torch(torch_bridge.to_torch(block))
    assert type(back) is nc.TransformerDecoderBlock and repr(back) == repr(block)
    assert back.drop3.p == 0.1 and back.bias == bias
    assert list(back.state_dict()) == list(block.state_dict())
    for key, value in block.state_dict().items():
        np.testing.assert_array_equal(back.state_dict()[key], value, err_msg=key)


def test_from_torch_refuses_dropout_normcore_cannot_express():
    tlayer = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.1, batch_first=True)
    with pytest.raises(ValueError, match="drops only the three residual branches"):
        torch_bridge.from_torch(tlayer)


@pytest.mark.parametrize("position", ["pre", "post"])
def test_a_memory_of_only_padding_is_nan_here_and_finite_in_torch(position):
    """Measured on torch 2.13: sequence 0's memory is all padding. normcore (as nn.MultiheadAttention's
    math path) gives NaN for it; torch's decoder layer (scaled_dot_product_attention) gives 0 attention
    there, in training and in eval. The other sequence agrees."""
    block = perturb_parameters(nc.TransformerDecoderBlock(E, H, FF, position=position, rng=0),
                               np.random.default_rng(1), 0.3)
    tblock = torch_bridge.to_torch(block)
    rng = np.random.default_rng(10)
    x, memory = rng.standard_normal((2, TT, E)), rng.standard_normal((2, TS, E))
    padding = np.zeros((2, TS), dtype=bool)
    padding[0] = True
    padding[1, 3:] = True
    y = block(x, memory, None, padding)
    assert np.isnan(y[0]).all() and np.isfinite(y[1]).all()
    for training in (True, False):
        tblock.train(training)
        with torch.set_grad_enabled(training):
            ty = tblock(torch.from_numpy(x), torch.from_numpy(memory), None, torch.from_numpy(padding))
        assert np.isfinite(ty.detach().numpy()[0]).all()
        assert rel(y[1], ty[1]) < 1e-10
