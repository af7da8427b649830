"""The small models built from the blocks of ``normcore.nn.transformer``: a decoder-only
language model (``TinyTransformer``) and an encoder-decoder (``TinySeq2Seq``), with the options
that are set per block (Mix-LN's positions, LayerNorm Scaling's depth) and the soft-cap of the
final logits."""

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import RngLike, as_array, check_upstream, integer, make_rng, positive_int, real_number
from ..i18n import translator
from ..module import Module, Sequential
from .embedding import Embedding, PositionalEmbedding, index_input
from .linear import Linear
from .softcap import SoftCap, softcap_value
from .transformer import POSITIONS, TransformerBlock, TransformerDecoderBlock, check_norm_scale, norm_class

_ = translator("cli")

MODEL_POSITIONS = POSITIONS + ("mix",)  # "mix": Mix-LN, Post-LN in the first blocks and Pre-LN in the rest
MIX_POST_FRACTION = 0.25  # Mix-LN's default share of Post-LN blocks (see block_positions)
FINAL_NORM = ("pre", "peri", "reordered")  # a last block at these positions leaves the stream unnormalised


def block_positions(position: object, n_blocks: int, mix_post_fraction: object, who: str) -> list[str]:
    """Each block's norm position, first to last: ``position`` for every block, or for "mix"
    (Mix-LN: Li et al. 2024, arXiv 2412.13795) "post" for the first floor(alpha * N) of the N
    blocks and "pre" for the rest, alpha = ``mix_post_fraction`` (0.25 when None; in [0, 1]).
    ``mix_post_fraction`` must be None for every other position."""
    if not (isinstance(position, str) and position in MODEL_POSITIONS):
        error = ValueError if isinstance(position, str) else TypeError
        raise error(_("{who}: position must be one of {choices}, got {got}")
                    .format(who=who, choices=MODEL_POSITIONS, got=repr(position)))
    if position != "mix":
        if mix_post_fraction is not None:
            raise ValueError(_("{who}: mix_post_fraction is Mix-LN's share of Post-LN blocks and needs "
                               "position='mix'; with position={position} it must be None, got {got}")
                             .format(who=who, position=repr(position), got=repr(mix_post_fraction)))
        return [position] * n_blocks
    alpha = (MIX_POST_FRACTION if mix_post_fraction is None
             else real_number(mix_post_fraction, "mix_post_fraction", who, 0.0, 1.0))
    n_post = math.floor(alpha * n_blocks + 1e-9)  # 0.29 * 100 is 28.999999999999996 in floating point
    return ["post"] * n_post + ["pre"] * (n_blocks - n_post)


class TinyTransformer(Module):
    r"""A small decoder-only Transformer language model: integer tokens in, next-token logits out.

    Shapes: tokens (B, T) integers in [0, vocab_size), T <= max_len; logits (B, T, vocab_size)::

        x = tok_emb(tokens)                  (B, T, d_model)   Embedding
        x = pos_emb(x)                       (B, T, d_model)   x + learned position vectors
        x = blocks(x)                        (B, T, d_model)   n_layers TransformerBlocks
        x = norm_f(x)                        (B, T, d_model)   when the last block is "pre", "peri"
                                                               or "reordered"
        logits = head(x)                     (B, T, vocab_size)
        logits = c * tanh(logits / c)        (B, T, vocab_size)   only with logit_softcap=c

    ``backward(dlogits)`` runs the same steps in reverse and accumulates every parameter's
    gradient; the integer tokens have none, so it returns None. A Pre-Norm stack needs the
    final norm because its residual stream is never normalised otherwise; Post-Norm and
    DeepNorm blocks already end in a norm. A Peri-LN stack's residual stream is not normalised
    either (only what each branch adds to it), so it gets the final norm too, as Gemma 2 and 3
    do (a final RMSNorm after the last block, before the output head); so does a stack of
    reordered blocks (OLMo 2 ends in a final RMSNorm as well). ``qk_norm``, ``qk_norm_scope``
    and ``attn_softcap`` are every block's attention's.

    Options set per block:

    - ``position="mix"`` is Mix-LN (Li et al. 2024, "Mix-LN: Unleashing the Power of Deeper
      Layers by Combining Pre-LN and Post-LN", arXiv 2412.13795): the first floor(alpha * N)
      of the N blocks are "post", the rest "pre", alpha = ``mix_post_fraction`` (default
      0.25; it must stay None for the other positions). The published scripts pass the number
      of Post-LN blocks itself: 3 of the 12 blocks of their 71M model, 6 of the 24 of their 1B
      model, both a quarter; with a fraction, normcore rounds down. The last block decides
      the final norm, so a Mix-LN stack has ``norm_f`` unless every block is "post".
    - ``norm_scale="depth"`` is LayerNorm Scaling (``TransformerBlock``): block i (counted from
      1) gets ``layer_index=i``, so its norms' outputs are multiplied by 1 / sqrt(i); only with
      position="pre". ``norm_f`` is not scaled.

    ``logit_softcap=c`` caps the final logits, c * tanh(logits / c) (child ``logit_cap``, a
    ``SoftCap``; no parameters), as Gemma 2 does with c = 30; its backward runs first in
    ``backward``. ``model.blocks`` is a ``Sequential`` whose children
    are named "0", "1", ..., so state dict keys read ``blocks.0.attn.q.weight`` as in PyTorch.
    ``activation`` is each feed-forward's; ``embedding_std`` the standard deviation the token and
    position embeddings are drawn with (small values, e.g. 0.02, leave the residual stream to
    the blocks from the first block on). ``norm_tier`` picks the norms' tier, as in
    ``TransformerBlock``.
    """

    def __init__(self, vocab_size: int, d_model: int, n_layers: int, n_heads: int, max_len: int,
                 d_ff: int | None = None, norm: str = "layernorm", position: str = "pre",
                 dropout: float = 0.0, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 activation: str = "gelu", embedding_std: float = 1.0,
                 norm_tier: str = "reference", qk_norm: str | None = None, qk_norm_scope: str = "head",
                 attn_softcap: float | None = None, logit_softcap: float | None = None,
                 norm_scale: str | None = None, mix_post_fraction: float | None = None) -> None:
        who = "TinyTransformer"
        vocab_size = positive_int(vocab_size, "vocab_size", who)
        d_model = positive_int(d_model, "d_model", who)
        n_layers = positive_int(n_layers, "n_layers", who)
        n_heads = positive_int(n_heads, "n_heads", who)
        max_len = positive_int(max_len, "max_len", who)
        positions = block_positions(position, n_layers, mix_post_fraction, who)
        check_norm_scale(who, position, norm_scale, None if norm_scale is None else 1)
        logit_softcap = softcap_value(logit_softcap, "logit_softcap", who, allow_none=True)
        self.vocab_size, self.max_len = vocab_size, max_len
        self.position, self.mix_post_fraction, self.norm_scale = position, mix_post_fraction, norm_scale
        rng = make_rng(rng)
        self.tok_emb = Embedding(vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.pos_emb = PositionalEmbedding(max_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.blocks = Sequential(*[
            TransformerBlock(d_model, n_heads, d_ff, norm, p, dropout, n_layers, rng, dtype, activation,
                             norm_tier, qk_norm=qk_norm, qk_norm_scope=qk_norm_scope, attn_softcap=attn_softcap,
                             norm_scale=norm_scale, layer_index=None if norm_scale is None else i + 1)
            for i, p in enumerate(positions)
        ])
        if positions[-1] in FINAL_NORM:
            self.norm_f = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.head = Linear(d_model, vocab_size, rng=rng, dtype=dtype)
        if logit_softcap is not None:
            self.logit_cap = SoftCap(logit_softcap)

    def _stages(self) -> list[Module]:
        """The modules a forward pass runs through, in order."""
        return [m for m in (self.tok_emb, self.pos_emb, self.blocks, getattr(self, "norm_f", None), self.head,
                            getattr(self, "logit_cap", None)) if m is not None]

    def forward(self, tokens: ArrayLike) -> np.ndarray:
        tokens = as_array(tokens, "TinyTransformer", "token ids")
        if tokens.ndim != 2:
            raise ValueError(f"TinyTransformer expects tokens of shape (B, T), got shape {tokens.shape}")
        index_input(tokens, self.vocab_size, "TinyTransformer", "token id")
        if tokens.shape[1] > self.max_len:
            raise ValueError(f"TinyTransformer: expected a sequence length T <= max_len={self.max_len}, "
                             f"got T={tokens.shape[1]}")
        x = tokens
        for m in self._stages():
            x = m(x)
        return x  # (B, T, vocab_size)

    def backward(self, dlogits: ArrayLike) -> None:
        for m in reversed(self._stages()):
            dlogits = m.backward(dlogits)
        return None  # tok_emb.backward returned None: integer tokens have no gradient


class TinySeq2Seq(Module):
    r"""A small encoder-decoder Transformer: source tokens in, logits over the target vocabulary
    out, the decoder reading the encoder's output through cross-attention.

    Shapes: src (B, Ts) integers in [0, src_vocab_size), Ts <= max_src_len; tgt (B, Tt) integers
    in [0, tgt_vocab_size), Tt <= max_tgt_len, the target shifted right (a start token first,
    teacher forcing); logits (B, Tt, tgt_vocab_size)::

        encode:  s = src_emb(src)                      (B, Ts, C)   Embedding
                 s = src_pos(s)                        (B, Ts, C)   + learned positions
                 s = encoder(s, src_key_padding_mask)  (B, Ts, C)   TransformerBlocks, causal=False
                 memory = enc_norm(s)                  (B, Ts, C)   when the last encoder block is
                                                                    "pre", "peri" or "reordered"
        decode:  t = tgt_emb(tgt)                      (B, Tt, C)
                 t = tgt_pos(t)                        (B, Tt, C)
                 t = decoder(t, memory)                (B, Tt, C)   TransformerDecoderBlocks, each
                                                                    cross-attending to memory
                 t = dec_norm(t)                       (B, Tt, C)   likewise, for the last decoder block
                 logits = head(t)                      (B, Tt, tgt_vocab_size)
                 logits = logit_cap(logits)            (B, Tt, tgt_vocab_size)   with logit_softcap=c

    ``backward(dlogits)`` runs decode in reverse, collecting dmemory = sum over the decoder
    blocks of each block's memory gradient (every block reads the same memory), then runs
    encode in reverse from dmemory; every parameter's gradient accumulates. Integer tokens
    have no gradient: it returns None, as ``TinyTransformer``'s.

    ``src_key_padding_mask`` (B, Ts), True at padding tokens of the source, masks them as keys
    of the encoder's self-attention and of every decoder block's cross-attention. The decoder's
    self-attention is causal, so position t of the target only sees the start token and the
    targets before t: at inference, ``greedy_decode`` feeds back its own predictions.

    ``n_layers`` encoder blocks and ``n_decoder_layers`` (default ``n_layers``) decoder blocks;
    the other arguments as in ``TinyTransformer``. With "deepnorm" each stack takes its own
    block's constants (``TransformerBlock``'s for the encoder, ``TransformerDecoderBlock``'s
    for the decoder); DeepNet's encoder values for an encoder-decoder model, which depend on
    both depths, are not used. ``qk_norm``, ``qk_norm_scope`` and ``attn_softcap`` are every
    attention's (``TransformerBlock``'s); ``logit_softcap`` caps the logits as in
    ``TinyTransformer``. ``position="mix"`` (Mix-LN, ``mix_post_fraction``) and
    ``norm_scale="depth"`` (LayerNorm Scaling) apply to each stack on its own: the first
    floor(alpha * N) encoder blocks and the first floor(alpha * M) decoder blocks are "post";
    encoder block i and decoder block i (from 1) get ``layer_index=i``. Both methods were
    published for decoder-only models; here they are carried over to each stack as it is.
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_model: int, n_layers: int, n_heads: int,
                 max_src_len: int, max_tgt_len: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 activation: str = "gelu", embedding_std: float = 1.0, norm_tier: str = "reference",
                 n_decoder_layers: int | None = None, qk_norm: str | None = None, qk_norm_scope: str = "head",
                 attn_softcap: float | None = None, logit_softcap: float | None = None,
                 norm_scale: str | None = None, mix_post_fraction: float | None = None) -> None:
        who = "TinySeq2Seq"
        self.src_vocab_size = positive_int(src_vocab_size, "src_vocab_size", who)
        self.tgt_vocab_size = positive_int(tgt_vocab_size, "tgt_vocab_size", who)
        d_model = positive_int(d_model, "d_model", who)
        n_layers = positive_int(n_layers, "n_layers", who)
        n_decoder_layers = n_layers if n_decoder_layers is None else positive_int(n_decoder_layers,
                                                                                  "n_decoder_layers", who)
        n_heads = positive_int(n_heads, "n_heads", who)
        self.max_src_len = positive_int(max_src_len, "max_src_len", who)
        self.max_tgt_len = positive_int(max_tgt_len, "max_tgt_len", who)
        enc_positions = block_positions(position, n_layers, mix_post_fraction, who)
        dec_positions = block_positions(position, n_decoder_layers, mix_post_fraction, who)
        check_norm_scale(who, position, norm_scale, None if norm_scale is None else 1)
        logit_softcap = softcap_value(logit_softcap, "logit_softcap", who, allow_none=True)
        self.position, self.mix_post_fraction, self.norm_scale = position, mix_post_fraction, norm_scale
        options: dict[str, Any] = {"qk_norm": qk_norm, "qk_norm_scope": qk_norm_scope,
                                   "attn_softcap": attn_softcap, "norm_scale": norm_scale}
        depth = (lambda i: None) if norm_scale is None else (lambda i: i + 1)  # noqa: E731, each block's layer_index
        rng = make_rng(rng)
        self.src_emb = Embedding(self.src_vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.src_pos = PositionalEmbedding(self.max_src_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.encoder = Sequential(*[
            TransformerBlock(d_model, n_heads, d_ff, norm, p, dropout, n_layers, rng, dtype, activation,
                             norm_tier, causal=False, layer_index=depth(i), **options)
            for i, p in enumerate(enc_positions)
        ])
        if enc_positions[-1] in FINAL_NORM:
            self.enc_norm = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.tgt_emb = Embedding(self.tgt_vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.tgt_pos = PositionalEmbedding(self.max_tgt_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.decoder = Sequential(*[
            TransformerDecoderBlock(d_model, n_heads, d_ff, norm, p, dropout, n_decoder_layers, rng, dtype,
                                    activation, norm_tier, layer_index=depth(i), **options)
            for i, p in enumerate(dec_positions)
        ])
        if dec_positions[-1] in FINAL_NORM:
            self.dec_norm = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.head = Linear(d_model, self.tgt_vocab_size, rng=rng, dtype=dtype)
        if logit_softcap is not None:
            self.logit_cap = SoftCap(logit_softcap)

    def extra_repr(self) -> str:
        return f"position={self.position!r}"

    def _check(self, src: ArrayLike, tgt: ArrayLike | None,
               src_key_padding_mask: ArrayLike | None) -> tuple[np.ndarray, np.ndarray | None]:
        """Every input checked, before any child runs."""
        who = "TinySeq2Seq"
        src = as_array(src, who, "source ids")
        if src.ndim != 2:
            raise ValueError(f"{who} expects source tokens of shape (B, Ts), got shape {src.shape}")
        index_input(src, self.src_vocab_size, who, "source id")
        if src.shape[1] > self.max_src_len:
            raise ValueError(f"source length Ts={src.shape[1]} exceeds max_src_len={self.max_src_len}")
        if tgt is not None:
            tgt = as_array(tgt, who, "target ids")
            if tgt.ndim != 2 or tgt.shape[0] != src.shape[0]:
                raise ValueError(f"{who} expects target tokens of shape (B, Tt) with the source's "
                                 f"B = {src.shape[0]}, got shape {tgt.shape}")
            index_input(tgt, self.tgt_vocab_size, who, "target id")
            if tgt.shape[1] > self.max_tgt_len:
                raise ValueError(f"target length Tt={tgt.shape[1]} exceeds max_tgt_len={self.max_tgt_len}")
        if src_key_padding_mask is not None:
            B, Ts = src.shape
            first = self.encoder[0]
            assert isinstance(first, TransformerBlock)
            try:
                first.attn.check_masks(src_key_padding_mask, None, B, Ts, Ts)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{who}: src_key_padding_mask is each attention's key_padding_mask: {err}") from None
        return src, tgt

    def _encode(self, src: np.ndarray, src_key_padding_mask: ArrayLike | None) -> np.ndarray:
        s = self.src_pos(self.src_emb(src))  # (B, Ts, C)
        for block in self.encoder:
            s = block(s, key_padding_mask=src_key_padding_mask)  # (B, Ts, C)
        enc_norm = getattr(self, "enc_norm", None)
        return s if enc_norm is None else enc_norm(s)  # (B, Ts, C), the memory

    def _decode(self, tgt: np.ndarray, memory: np.ndarray, src_key_padding_mask: ArrayLike | None) -> np.ndarray:
        t = self.tgt_pos(self.tgt_emb(tgt))  # (B, Tt, C)
        for block in self.decoder:
            t = block(t, memory, memory_key_padding_mask=src_key_padding_mask)  # (B, Tt, C)
        dec_norm = getattr(self, "dec_norm", None)
        logits = self.head(t if dec_norm is None else dec_norm(t))  # (B, Tt, V)
        logit_cap = getattr(self, "logit_cap", None)
        return logits if logit_cap is None else logit_cap(logits)  # (B, Tt, V), c * tanh(logits / c)

    def forward(self, src: ArrayLike, tgt: ArrayLike, src_key_padding_mask: ArrayLike | None = None) -> np.ndarray:
        src_ids, tgt_ids = self._check(src, tgt, src_key_padding_mask)  # every input, before any child runs
        assert tgt_ids is not None
        logits = self._decode(tgt_ids, self._encode(src_ids, src_key_padding_mask), src_key_padding_mask)
        self._cache = logits.shape
        return logits  # (B, Tt, V)

    def backward(self, dlogits: ArrayLike) -> None:
        shape = self._cached()
        dt = check_upstream(dlogits, shape, "TinySeq2Seq")
        logit_cap = getattr(self, "logit_cap", None)
        if logit_cap is not None:
            dt = logit_cap.backward(dt)  # (B, Tt, V), through c * tanh(logits / c)
        dt = self.head.backward(dt)  # (B, Tt, C)
        dec_norm = getattr(self, "dec_norm", None)
        if dec_norm is not None:
            dt = dec_norm.backward(dt)  # (B, Tt, C)
        dmemory: Any = 0.0
        for block in reversed(list(self.decoder)):
            dt, dm = block.backward(dt)  # (B, Tt, C), (B, Ts, C)
            dmemory = dmemory + dm  # (B, Ts, C): every decoder block reads the same memory
        self.tgt_emb.backward(self.tgt_pos.backward(dt))  # tgt_emb's gradients; None for the ids
        ds = np.asarray(dmemory)
        enc_norm = getattr(self, "enc_norm", None)
        if enc_norm is not None:
            ds = enc_norm.backward(ds)  # (B, Ts, C)
        for block in reversed(list(self.encoder)):
            ds = block.backward(ds)  # (B, Ts, C)
        self.src_emb.backward(self.src_pos.backward(ds))
        return None  # the embeddings' backward returned None: integer ids have no gradient

    def greedy_decode(self, src: ArrayLike, start: int, steps: int,
                      src_key_padding_mask: ArrayLike | None = None) -> np.ndarray:
        """Decode ``steps`` tokens after the ``start`` token, each the argmax of the logits at the
        last position, fed back as the next input; returns them, (B, steps) int64.

        The encoder runs once; the decoder reruns on the growing prefix (its self-attention is
        causal, so the logits of earlier positions do not change). Put the model in eval mode
        first when it has dropout. It is inference only: a backward after it raises."""
        steps = positive_int(steps, "steps", "TinySeq2Seq.greedy_decode")
        if steps > self.max_tgt_len:
            raise ValueError(f"TinySeq2Seq.greedy_decode: steps={steps} exceeds max_tgt_len={self.max_tgt_len}")
        src, _ = self._check(src, None, src_key_padding_mask)
        start = integer(start, "start", "TinySeq2Seq.greedy_decode")
        first = np.full((src.shape[0], 1), start, dtype=np.int64)  # (B, 1)
        index_input(first, self.tgt_vocab_size, "TinySeq2Seq.greedy_decode", "start token")
        self._cache = None
        memory = self._encode(src, src_key_padding_mask)  # (B, Ts, C)
        tgt = first
        for _ in range(steps):
            logits = self._decode(tgt, memory, src_key_padding_mask)  # (B, t, V)
            tgt = np.concatenate([tgt, logits[:, -1].argmax(-1)[:, None]], axis=1)  # (B, t + 1)
        return tgt[:, 1:]
