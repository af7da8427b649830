"""The Transformer block's twins: ``nn.TransformerEncoderLayer`` where torch has the block
(Pre-Norm or Post-Norm with LayerNorm), else a torch module written as normcore's block (every
position, LayerNorm Scaling); the feed-forward and the tiny language model (Mix-LN's blocks
each at its own position, the soft-capped logits).

``block_twins()`` builds them on first use; ``residual_sublayers`` is the residual placement
of every norm position in torch, which the decoder's twin reuses. ``from_torch`` builds a
``TransformerBlock`` from ``nn.TransformerEncoderLayer``.
"""

import functools

from .. import nn
from .attention import attention_keys, attention_twins
from .core import _named_children, _torch, builds_from_torch, converts


@converts(nn.FeedForward)
def _feedforward(m, sub):
    return block_twins().FeedForward(sub(m.fc1), sub(m.act), sub(m.fc2))


def torch_has_block(m, attn, sublayers):
    """Whether torch's own encoder or decoder layer computes block ``m`` (its attention
    ``attn``, its norms norm1 .. norm{sublayers}): "pre" or "post" with LayerNorm of one eps,
    no QK-norm, no soft-cap, no LayerNorm Scaling."""
    return (m.position in ("pre", "post") and m.norm_kind == "layernorm" and m.norm_scale is None
            and attn.qk_norm is None and attn.attn_softcap is None
            and len({getattr(m, f"norm{i}").eps for i in range(1, sublayers + 1)}) == 1)


@converts(nn.TransformerBlock)
def _block(m, sub):
    """"pre" and "post" with LayerNorm: ``nn.TransformerEncoderLayer`` (norm_first for "pre");
    the other blocks (RMSNorm, DyT, "deepnorm", "none", "peri", "reordered", QK-norm, soft-cap,
    LayerNorm Scaling): a twin of normcore's block."""
    if torch_has_block(m, m.attn, 2):
        t = block_twins().TransformerEncoderLayer(
            m.d_model, m.attn.num_heads, m.d_ff, m.drop1.p, sub(m.ffn.act), m.norm1.eps, batch_first=True,
            norm_first=m.position == "pre", bias=m.bias)
        t.self_attn.dropout = 0.0  # normcore's block drops only the residual branches (dropout1, dropout2)
        t.dropout.p = 0.0  # not the attention weights, nor the feed-forward's hidden units
        t.dropout2.p = m.drop2.p
        t.train(m.training)
        t.dropout1.training, t.dropout2.training = m.drop1.training, m.drop2.training
        keys = {f"attn.{k}": (f"self_attn.{tk}", rows) for k, (tk, rows) in attention_keys(m.attn).items()}
        names = {"norm1": "norm1", "norm2": "norm2", "ffn.fc1": "linear1", "ffn.fc2": "linear2"}
        for key in m.state_dict():
            child, _dot, leaf = key.rpartition(".")
            if child in names:
                keys[key] = (f"{names[child]}.{leaf}", ...)
        t.causal, t.normcore_keys = m.attn.causal, keys
        return t
    children = {name: sub(child) for name, child in _named_children(m)}
    return block_twins().TransformerBlock(m.position, m.alpha, children, m.depth_scale)


@converts(nn.TinyTransformer)
def _tiny(m, sub):
    return block_twins().Stages({name: sub(child) for name, child in _named_children(m)})


@functools.cache
def block_twins():
    """torch modules of the feed-forward, the blocks and the tiny language model."""
    torch = _torch()
    torch_masks = attention_twins().torch_masks

    class TransformerEncoderLayer(torch.nn.TransformerEncoderLayer):
        """``torch.nn.TransformerEncoderLayer`` itself (batch_first), called as normcore's block:
        ``forward(x, key_padding_mask=None, attn_mask=None)``, with ``causal`` merged into the
        mask. Its self-attention runs with ``need_weights=False`` (F.scaled_dot_product_attention):
        equal to normcore except on a fully masked row. With gradients enabled it never takes
        the fused fast path."""

        causal = False

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            kpm, am = torch_masks(x.shape[1], x.shape[1], key_padding_mask, attn_mask, self.causal, x.dtype)
            return super().forward(x, src_mask=am, src_key_padding_mask=kpm)

    class FeedForward(torch.nn.Module):
        def __init__(self, fc1, act, fc2):
            super().__init__()
            self.fc1, self.act, self.fc2 = fc1, act, fc2

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    def residual_sublayers(block, x, fs):
        """normcore's residual placement in torch, for a twin block with children norm{i},
        drop{i} (and norm{i}_out): sub-layer i is fs[i - 1] (pre: x + drop(F(s * Norm(x))),
        s = block.depth_scale, 1 / sqrt(l) with LayerNorm Scaling, else 1;
        peri: x + Norm_out(drop(F(Norm(x)))); reordered: x + drop(Norm_out(F(x)));
        none: x + drop(F(x)); post/deepnorm: Norm(alpha x + drop(F(x))))."""
        for i, f in enumerate(fs, start=1):
            norm, out_norm = getattr(block, f"norm{i}", None), getattr(block, f"norm{i}_out", None)
            drop = getattr(block, f"drop{i}")
            if block.position == "pre":
                x = x + drop(f(block.depth_scale * norm(x)))
            elif block.position == "peri":
                x = x + out_norm(drop(f(norm(x))))
            elif block.position == "reordered":
                x = x + drop(out_norm(f(x)))
            elif block.position == "none":
                x = x + drop(f(x))
            else:
                x = norm(block.alpha * x + drop(f(x)))
        return x

    class TransformerBlock(torch.nn.Module):
        """pre: x + drop(F(s * Norm(x))) (s = depth_scale); post/deepnorm: Norm(alpha x + drop(F(x)));
        none: x + drop(F(x)); peri: x + Norm_out(drop(F(Norm(x)))); reordered: x + drop(Norm_out(F(x)));
        for F = attn (norm1, drop1, norm1_out), then ffn (norm2, drop2, norm2_out)."""

        def __init__(self, position, alpha, children, depth_scale=1.0):
            super().__init__()
            self.position, self.alpha, self.depth_scale = position, alpha, depth_scale
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x, key_padding_mask=None, attn_mask=None):
            def attn(h):
                return self.attn(h, key_padding_mask, attn_mask)
            return residual_sublayers(self, x, (attn, self.ffn))

    class Stages(torch.nn.Module):
        """Children applied in order (TinyTransformer: tok_emb, pos_emb, blocks, norm_f,
        head, logit_cap), under normcore's names, so the state dict keys match."""

        def __init__(self, children):
            super().__init__()
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x):
            for child in self.children():
                x = child(x)
            return x

    return type("BlockTwins", (), dict(
        TransformerEncoderLayer=TransformerEncoderLayer, FeedForward=FeedForward,
        TransformerBlock=TransformerBlock, Stages=Stages, residual_sublayers=residual_sublayers))


def activation_name(tnn, act):
    """normcore's name of the activation of torch's encoder or decoder layer (a function or a
    module of ``tnn``, torch.nn)."""
    F = tnn.functional
    if act is F.relu or isinstance(act, tnn.ReLU):
        return "relu"
    if act is F.gelu or (isinstance(act, tnn.GELU) and act.approximate == "none"):
        return "gelu"
    if isinstance(act, tnn.GELU) and act.approximate == "tanh":
        return "gelu_tanh"
    raise ValueError(f"from_torch: TransformerEncoderLayer's activation must be relu or gelu "
                     f"(a function or a module), got {act!r}")


@builds_from_torch
def _from_torch(tnn):
    def encoder_layer(t, sub):
        if t.self_attn.dropout or t.dropout.p or t.dropout1.p != t.dropout2.p:
            raise ValueError(
                "from_torch: normcore's TransformerBlock drops only the two residual branches, with one p; "
                f"expected self_attn.dropout = dropout.p = 0 and dropout1.p == dropout2.p, got "
                f"{t.self_attn.dropout}, {t.dropout.p}, {t.dropout1.p}, {t.dropout2.p}")
        if t.norm1.eps != t.norm2.eps:
            raise ValueError(f"from_torch: expected norm1 and norm2 with one eps, got {t.norm1.eps}, {t.norm2.eps}")
        block = nn.TransformerBlock(t.linear1.in_features, t.self_attn.num_heads, t.linear1.out_features,
                                    "layernorm", "pre" if t.norm_first else "post", t.dropout1.p,
                                    activation=activation_name(tnn, t.activation), causal=getattr(t, "causal", False),
                                    bias=t.linear1.bias is not None)
        block.norm1.eps = block.norm2.eps = t.norm1.eps
        return block

    return {tnn.TransformerEncoderLayer: encoder_layer}
