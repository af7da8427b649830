"""The decoder block's and the encoder-decoder model's twins: ``nn.TransformerDecoderLayer``
where torch has the block (Pre-Norm or Post-Norm with LayerNorm), else a torch module written
as normcore's block (``decoder_twins()``, built on first use); ``decoder_keys`` says where
each array lives in torch's layer. ``from_torch`` builds a ``TransformerDecoderBlock`` from
``nn.TransformerDecoderLayer``.
"""

import functools

from .. import nn
from .attention import attention_keys, attention_twins
from .blocks import activation_name, block_twins, torch_has_block
from .core import _named_children, _torch, builds_from_torch, converts


def decoder_keys(m):
    """normcore key -> (``nn.TransformerDecoderLayer`` key, rows) for decoder block ``m``:
    self_attn and cross_attn are the layer's ``self_attn`` and ``multihead_attn`` (through
    ``attention_keys``), the feed-forward's fc1 and fc2 its ``linear1`` and ``linear2``, the
    norms keep their names."""
    keys = {}
    for ours, theirs in (("self_attn", "self_attn"), ("cross_attn", "multihead_attn")):
        for k, (tk, rows) in attention_keys(getattr(m, ours)).items():
            keys[f"{ours}.{k}"] = (f"{theirs}.{tk}", rows)
    names = {"norm1": "norm1", "norm2": "norm2", "norm3": "norm3", "ffn.fc1": "linear1", "ffn.fc2": "linear2"}
    for key in m.state_dict():
        child, _dot, leaf = key.rpartition(".")
        if child in names:
            keys[key] = (f"{names[child]}.{leaf}", ...)
    return keys


@converts(nn.TransformerDecoderBlock)
def _decoder_block(m, sub):
    """"pre" and "post" with LayerNorm: ``nn.TransformerDecoderLayer`` (norm_first for "pre"),
    called with the causal mask as ``tgt_mask``; the other blocks (RMSNorm, DyT, "deepnorm",
    "none", "peri", "reordered", QK-norm, soft-cap, LayerNorm Scaling): a twin of normcore's block."""
    if torch_has_block(m, m.self_attn, 3):
        t = decoder_twins().TransformerDecoderLayer(
            m.d_model, m.self_attn.num_heads, m.d_ff, m.drop1.p, sub(m.ffn.act), m.norm1.eps, batch_first=True,
            norm_first=m.position == "pre", bias=m.bias)
        t.self_attn.dropout = t.multihead_attn.dropout = 0.0  # normcore drops only the residual branches,
        t.dropout.p = 0.0  # not the attention weights, nor the feed-forward's hidden units
        t.dropout2.p, t.dropout3.p = m.drop2.p, m.drop3.p
        t.train(m.training)
        t.causal, t.normcore_keys = m.self_attn.causal, decoder_keys(m)
        return t
    children = {name: sub(child) for name, child in _named_children(m)}
    return decoder_twins().TransformerDecoderBlock(m.position, m.alpha, children, m.depth_scale)


@converts(nn.TinySeq2Seq)
def _seq2seq(m, sub):
    return decoder_twins().Seq2Seq({name: sub(child) for name, child in _named_children(m)})


@functools.cache
def decoder_twins():
    """torch twins of the decoder block and of the encoder-decoder model, built on first use."""
    torch = _torch()
    torch_masks = attention_twins().torch_masks

    class TransformerDecoderLayer(torch.nn.TransformerDecoderLayer):
        """``torch.nn.TransformerDecoderLayer`` itself (batch_first), called as normcore's
        decoder block: ``forward(x, memory, tgt_key_padding_mask=None,
        memory_key_padding_mask=None, tgt_mask=None, memory_mask=None)``. torch's layer is not
        causal by itself; normcore's self-attention is when ``causal`` (the default), and then the
        causal mask is merged into ``tgt_mask`` (``tgt_is_causal`` left False: the merged mask is
        used as it is)."""

        causal = True

        def forward(self, x, memory, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_mask=None,
                    memory_mask=None):
            T, S = x.shape[1], memory.shape[1]
            tkpm, tmask = torch_masks(T, T, tgt_key_padding_mask, tgt_mask, self.causal, x.dtype)
            mkpm, mmask = torch_masks(T, S, memory_key_padding_mask, memory_mask, False, x.dtype)
            return super().forward(x, memory, tgt_mask=tmask, memory_mask=mmask, tgt_key_padding_mask=tkpm,
                                   memory_key_padding_mask=mkpm)

    class TransformerDecoderBlock(torch.nn.Module):
        """normcore's decoder block in torch, for the positions and norms torch's layer lacks:
        the placements of ``block_twins().residual_sublayers`` (pre, with LayerNorm Scaling's
        depth_scale; post/deepnorm; none; peri; reordered) for F = self_attn (norm1, drop1,
        norm1_out), cross_attn to memory (norm2, drop2, norm2_out), ffn (norm3, drop3, norm3_out)."""

        def __init__(self, position, alpha, children, depth_scale=1.0):
            super().__init__()
            self.position, self.alpha, self.depth_scale = position, alpha, depth_scale
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, x, memory, tgt_key_padding_mask=None, memory_key_padding_mask=None, tgt_mask=None,
                    memory_mask=None):
            def self_attn(h):
                return self.self_attn(h, tgt_key_padding_mask, tgt_mask)

            def cross_attn(h):
                return self.cross_attn(h, memory, memory, memory_key_padding_mask, memory_mask)

            return block_twins().residual_sublayers(self, x, (self_attn, cross_attn, self.ffn))

    class Seq2Seq(torch.nn.Module):
        """TinySeq2Seq in torch, under normcore's names: src_emb, src_pos, encoder (blocks
        taking the source padding mask), enc_norm, tgt_emb, tgt_pos, decoder (blocks taking
        the memory and the same mask), dec_norm, head."""

        def __init__(self, children):
            super().__init__()
            for name, child in children.items():
                self.add_module(name, child)

        def forward(self, src, tgt, src_key_padding_mask=None):
            s = self.src_pos(self.src_emb(src))
            for block in self.encoder:
                s = block(s, src_key_padding_mask)
            memory = self.enc_norm(s) if hasattr(self, "enc_norm") else s
            t = self.tgt_pos(self.tgt_emb(tgt))
            for block in self.decoder:
                t = block(t, memory, memory_key_padding_mask=src_key_padding_mask)
            logits = self.head(self.dec_norm(t) if hasattr(self, "dec_norm") else t)
            return self.logit_cap(logits) if hasattr(self, "logit_cap") else logits

    return type("DecoderTwins", (), dict(TransformerDecoderLayer=TransformerDecoderLayer,
                                         TransformerDecoderBlock=TransformerDecoderBlock, Seq2Seq=Seq2Seq))


@builds_from_torch
def _from_torch(tnn):
    def decoder_layer(t, sub):
        """A TransformerDecoderBlock, causal only if ``t`` is ``to_torch``'s causal twin: torch's own
        layer is not causal by itself (its tgt_mask carries causality), so it becomes a block
        with ``causal=False``."""
        attention_dropout = (t.self_attn.dropout, t.multihead_attn.dropout, t.dropout.p)
        if any(attention_dropout) or not t.dropout1.p == t.dropout2.p == t.dropout3.p:
            raise ValueError(
                "from_torch: normcore's TransformerDecoderBlock drops only the three residual branches, with one "
                "p; expected self_attn.dropout = multihead_attn.dropout = dropout.p = 0 and dropout1.p == "
                f"dropout2.p == dropout3.p, got {attention_dropout}, {t.dropout1.p}, {t.dropout2.p}, {t.dropout3.p}")
        if not t.norm1.eps == t.norm2.eps == t.norm3.eps:
            raise ValueError(f"from_torch: expected norm1, norm2 and norm3 with one eps, got {t.norm1.eps}, "
                             f"{t.norm2.eps}, {t.norm3.eps}")
        block = nn.TransformerDecoderBlock(t.linear1.in_features, t.self_attn.num_heads, t.linear1.out_features,
                                           "layernorm", "pre" if t.norm_first else "post", t.dropout1.p,
                                           activation=activation_name(tnn, t.activation),
                                           bias=t.linear1.bias is not None, causal=getattr(t, "causal", False))
        block.norm1.eps = block.norm2.eps = block.norm3.eps = t.norm1.eps
        return block

    return {tnn.TransformerDecoderLayer: decoder_layer}
