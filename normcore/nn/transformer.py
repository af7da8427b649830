"""The feed-forward sub-layer, the Transformer block (encoder or causal) and the decoder block
with its cross-attention, each with its norm in four positions, a small decoder-only language
model and a small encoder-decoder model built from them."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (RngLike, as_array, check_upstream, flag, float_input, integer, make_rng, positive_int,
                      real_number)
from ..module import Module, Sequential
from ..norms import DyT, LayerNorm, RMSNorm
from .activations import ACTIVATIONS
from .attention import CausalSelfAttention, MultiheadAttention, MultiheadSelfAttention, qk_norm_choice
from .dropout import Dropout
from .embedding import Embedding, PositionalEmbedding, index_input
from .linear import Linear

NORMS = ("layernorm", "rmsnorm", "dyt")
NORM_TIERS = ("reference", "fast")


def norm_class(norm: str, tier: str = "reference") -> type[LayerNorm] | type[RMSNorm] | type[DyT]:
    """The class of the norm named ``norm`` ("layernorm", "rmsnorm" or "dyt") in ``tier``:
    "reference" (``normcore.norms``, the readable layers) or "fast" (``normcore.fast``, the
    same layers with cache-blocked kernels, for experiments bound by time; imported only when
    asked for). DyT has no fast twin (it is one element-wise pass, with no reduction to block):
    the reference class serves both tiers."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if tier not in NORM_TIERS:
        raise ValueError(f"norm_tier must be one of {NORM_TIERS}, got {tier!r}")
    if tier == "fast" and norm != "dyt":
        from .. import fast
        return {"layernorm": fast.LayerNorm, "rmsnorm": fast.RMSNorm}[norm]
    return {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "dyt": DyT}[norm]
POSITIONS = ("pre", "post", "deepnorm", "none", "peri")


class FeedForward(Module):
    r"""The position-wise feed-forward sub-layer: expand, activate, project back.

    Shapes: x (*, d_model), h (*, d_ff), y (*, d_model)::

        h  = act(x W1^T + b1)            fc1, act
        y  = h W2^T + b2                 fc2
        backward: dx = fc1.backward(act.backward(fc2.backward(dy)))

    ``activation`` is "gelu" (the exact erf form, PyTorch's default; the default here too),
    "gelu_tanh" (its tanh approximation), "relu", "tanh" or "sigmoid";
    ``gain`` scales the initialisation of both projections (DeepNorm's beta).
    """

    def __init__(self, d_model: int, d_ff: int, activation: str = "gelu", bias: bool = True,
                 init: str = "xavier", gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64) -> None:
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        d_model = positive_int(d_model, "d_model", "FeedForward")
        d_ff = positive_int(d_ff, "d_ff", "FeedForward")
        rng = make_rng(rng)
        self.fc1 = Linear(d_model, d_ff, bias, init, gain, rng, dtype)
        self.act = ACTIVATIONS[activation]()
        self.fc2 = Linear(d_ff, d_model, bias, init, gain, rng, dtype)

    def forward(self, x: ArrayLike) -> np.ndarray:
        return self.fc2(self.act(self.fc1(x)))

    def backward(self, dy: ArrayLike) -> np.ndarray:
        return self.fc1.backward(self.act.backward(self.fc2.backward(dy)))


def deepnorm_constants(n_layers: int, sublayers: int = 2) -> tuple[float, float]:
    """DeepNet's constants for a decoder-only stack of N blocks: alpha = (2N)**(1/4), beta = (8N)**(-1/4).

    alpha up-weights the identity path x inside the norm, Norm(alpha * x + F(x)); beta
    shrinks the initialisation of the feed-forward and of the attention value and output
    projections. Together they bound how much one update can change the output, which lets
    Post-Norm-style blocks train at depths where plain Post-Norm diverges (Wang et al., 2022).

    ``sublayers`` is the number of residual sub-layers per block, s: alpha = (sN)**(1/4),
    beta = (4sN)**(-1/4). s = 2 (attention, feed-forward) gives the values above; s = 3 gives
    DeepNet's values for the decoder of an encoder-decoder model, whose blocks also
    cross-attend: alpha = (3M)**(1/4), beta = (12M)**(-1/4) for M decoder blocks.
    """
    n_layers = positive_int(n_layers, "n_layers", "deepnorm_constants")
    sublayers = positive_int(sublayers, "sublayers", "deepnorm_constants")
    return (sublayers * n_layers) ** 0.25, (4.0 * sublayers * n_layers) ** -0.25


def self_attention(causal: bool, d_model: int, n_heads: int, bias: bool, **kwargs: Any) -> MultiheadSelfAttention:
    """A block's self-attention: ``CausalSelfAttention`` (a decoder's), or ``MultiheadSelfAttention``
    with ``causal=False`` (an encoder's); ``kwargs`` go to either."""
    if causal:
        return CausalSelfAttention(d_model, n_heads, bias, **kwargs)
    return MultiheadSelfAttention(d_model, n_heads, False, bias, **kwargs)


class ResidualSublayers(Module):
    """The residual wrapping every Transformer block shares: a sub-layer F with its residual
    connection and its norm at ``self.position`` ("pre", "post", "deepnorm", "none", "peri": a
    norm on F's input and ``out_norm`` on its output), with
    DeepNorm's ``self.alpha`` (1 otherwise). ``TransformerBlock`` and ``TransformerDecoderBlock``
    set both and call ``_residual`` once per sub-layer in forward, ``_residual_backward`` in
    reverse order in backward; the table of formulas is in ``TransformerBlock``'s docstring.

    ``f`` is the sub-layer as a function of its (normalised, for "pre") input, ``f_backward``
    its backward, from dL/dF to dL/d(that input): for a sub-layer with a second input (the
    decoder's cross-attention reading the encoder's memory) they are closures that take the
    other input along and collect its gradient.
    """

    position: str
    alpha: float
    bias: bool
    _dtype: DTypeLike

    def _setup(self, who: str, d_model: int, d_ff: int | None, norm: str, norm_tier: str, position: str,
               dropout: float, n_layers: int | None, bias: bool, qk_norm: str | None,
               sublayers: int) -> tuple[float, str | None]:
        """Check the arguments every block shares and set d_model, d_ff, position, norm_kind,
        n_layers, alpha and bias; returns (dropout, qk_norm) checked and DeepNorm's beta is kept
        in ``self._beta`` (1 for the other positions). ``sublayers`` is the block's count (2 for
        an encoder or decoder-only block, 3 for an encoder-decoder's decoder block)."""
        self._Norm = norm_class(norm, norm_tier)
        qk_norm = qk_norm_choice(qk_norm, who)
        self.bias = flag(bias, "bias", who)
        if position not in POSITIONS:
            raise ValueError(f"{who}: position must be one of {POSITIONS}, got {position!r}")
        if n_layers is not None:
            n_layers = positive_int(n_layers, "n_layers", who)
        if position == "deepnorm" and n_layers is None:
            raise ValueError(f"{who}: position='deepnorm' needs n_layers, the number of blocks N >= 1, got None")
        dropout = real_number(dropout, "dropout", who, 0.0, 1.0)
        self.d_model = positive_int(d_model, "d_model", who)
        self.position, self.norm_kind, self.n_layers = position, norm, n_layers
        self.d_ff = 4 * self.d_model if d_ff is None else positive_int(d_ff, "d_ff", who)
        self.alpha, self._beta = (deepnorm_constants(n_layers, sublayers)
                                  if position == "deepnorm" and n_layers is not None else (1.0, 1.0))
        return dropout, qk_norm

    def _norm(self) -> Module:
        """A new norm of the block's kind over d_model (LayerNorm and DyT take the block's bias)."""
        extra = {"bias": self.bias} if self.norm_kind in ("layernorm", "dyt") else {}  # RMSNorm has no bias
        return self._Norm(self.d_model, dtype=self._dtype, **extra)

    def _add_sublayer(self, i: int, name: str, layer: Module) -> None:
        """Register sub-layer i under ``name`` with its norms, in the state dict's order: norm{i}
        on its input (every position but "none"), the layer, and norm{i}_out on its output
        (Peri-LN only)."""
        if self.position != "none":
            setattr(self, f"norm{i}", self._norm())
        setattr(self, name, layer)
        if self.position == "peri":
            setattr(self, f"norm{i}_out", self._norm())

    def _norms_of(self, i: int) -> tuple[Any, Any]:
        """(norm{i}, norm{i}_out) of sub-layer i, None where the position has no such norm."""
        return getattr(self, f"norm{i}", None), getattr(self, f"norm{i}_out", None)

    def _residual(self, x: np.ndarray, f: Callable[[np.ndarray], np.ndarray], norm: Any,
                  drop: Dropout, out_norm: Any = None) -> np.ndarray:
        if self.position == "pre":
            return x + drop(f(norm(x)))
        if self.position == "peri":
            return x + out_norm(drop(f(norm(x))))
        if self.position == "none":
            return x + drop(f(x))
        return norm(self.alpha * x + drop(f(x)))  # post (alpha = 1) and deepnorm

    def _residual_backward(self, dy: np.ndarray, f_backward: Callable[[np.ndarray], np.ndarray], norm: Any,
                           drop: Dropout, out_norm: Any = None) -> np.ndarray:
        if self.position == "pre":
            return dy + norm.backward(f_backward(drop.backward(dy)))  # (B, T, C)
        if self.position == "peri":
            return dy + norm.backward(f_backward(drop.backward(out_norm.backward(dy))))  # (B, T, C)
        if self.position == "none":
            return dy + f_backward(drop.backward(dy))  # (B, T, C)
        dz = norm.backward(dy)  # (B, T, C), the gradient of the residual sum alpha * x + F(x)
        return self.alpha * dz + f_backward(drop.backward(dz))  # (B, T, C)


class TransformerBlock(ResidualSublayers):
    r"""A Transformer block: self-attention then a feed-forward, each wrapped with a residual
    connection and a norm placed by ``position``. In the residual sum x + F(x), x is the identity
    path and F(x) the residual branch. ``causal=True`` (the default) gives a decoder-only
    language model's block; ``causal=False`` an encoder layer, where every position attends to
    every other (PyTorch's ``nn.TransformerEncoderLayer``, for "pre" and "post" with LayerNorm).

    For each sub-layer F (first ``attn`` with ``norm1``, then ``ffn`` with ``norm2``), with
    ``drop`` the residual dropout applied to F's output::

        position     forward                               backward (dy = dL/dy)
        "pre"        y = x + drop(F(Norm(x)))              dx = dy + Norm'(F'(drop'(dy)))
        "post"       y = Norm(x + drop(F(x)))              dz = Norm'(dy);  dx = dz + F'(drop'(dz))
        "deepnorm"   y = Norm(alpha * x + drop(F(x)))      dz = Norm'(dy);  dx = alpha * dz + F'(drop'(dz))
        "none"       y = x + drop(F(x))                    dx = dy + F'(drop'(dy))
        "peri"       y = x + Norm_out(drop(F(Norm(x))))    dx = dy + Norm'(F'(drop'(Norm_out'(dy))))

    where G'(g) is G's backward applied to the gradient g. In Pre-Norm the identity path
    x -> y carries dy to the input untouched; in Post-Norm and DeepNorm every gradient first
    goes through the norm's backward, after the residual add. DeepNorm uses alpha = (2N)**(1/4)
    and initialises the feed-forward and the attention value and output projections with gain
    beta = (8N)**(-1/4), N = ``n_layers`` (required for "deepnorm"). Peri-LN, the "sandwich"
    norm (CogView's Sandwich-LN, Ding et al. 2021; Gemma 2 and 3; Kim et al. 2025), keeps
    Pre-Norm's untouched identity path and also normalises each branch's output before it joins
    the stream, so no branch can add more than a norm's worth (gamma_out) to the residual
    stream, however large F's output grows.

    Shapes: x and y (B, T, d_model). ``d_ff`` defaults to 4 * d_model; ``norm`` is "layernorm"
    or "rmsnorm", from ``norm_tier`` "reference" (default) or "fast" (see ``norm_class``);
    ``activation`` is the feed-forward's ("gelu" the exact form, "gelu_tanh", or e.g.
    "relu" as in the original Transformer). Children: norm1, attn, norm2, ffn (norm1 and norm2 absent for "none"),
    drop1, drop2 (``Dropout(dropout)``, each uses its own cached mask in backward); "peri" adds
    norm1_out after attn and norm2_out after ffn (Norm_out of the table; norm1 and norm2 keep
    their Pre-Norm role). ``qk_norm`` (None, "rmsnorm", "layernorm") is the attention's (see
    ``MultiheadAttention``): each head's queries and keys normalised before 1/sqrt(D). ``bias=False``
    drops the biases of the attention and feed-forward projections and of the LayerNorms (as
    ``nn.TransformerEncoderLayer(bias=False)``).

    ``forward(x, key_padding_mask=None, attn_mask=None)`` hands the masks to the attention
    (``MultiheadSelfAttention``'s convention: key_padding_mask (B, T), attn_mask (T, T),
    torch's (B * H, T, T) or (B, H, T, T), a boolean True = masked out, a floating mask added
    to the scores); they are
    checked before any sub-layer runs. The masks are constants: backward is unchanged. A query
    whose every key is masked out gives NaN, as ``MultiheadSelfAttention`` says; PyTorch's
    ``nn.TransformerEncoderLayer`` gives NaN there only on its fused fast path (eval mode under
    no_grad), while in training its attention (``F.scaled_dot_product_attention``) mixes no
    value there (A = 0, the attention's output is the output projection's bias, and no gradient
    flows back through it; measured on torch 2.13). Give every query at least one key.
    """

    attn: MultiheadSelfAttention
    ffn: FeedForward

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, n_layers: int | None = None,
                 rng: RngLike = None, dtype: DTypeLike = np.float64, activation: str = "gelu",
                 norm_tier: str = "reference", causal: bool = True, bias: bool = True,
                 qk_norm: str | None = None) -> None:
        causal = flag(causal, "causal", "TransformerBlock")
        self._dtype = dtype
        dropout, qk_norm = self._setup("TransformerBlock", d_model, d_ff, norm, norm_tier, position, dropout,
                                       n_layers, bias, qk_norm, sublayers=2)
        rng = make_rng(rng)
        C, beta = self.d_model, self._beta
        self._add_sublayer(1, "attn", self_attention(causal, C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                     dtype=dtype, qk_norm=qk_norm))
        self._add_sublayer(2, "ffn", FeedForward(C, self.d_ff, activation, self.bias, gain=beta, rng=rng,
                                                 dtype=dtype))
        self.drop1 = Dropout(dropout, rng=rng)
        self.drop2 = Dropout(dropout, rng=rng)

    def extra_repr(self) -> str:
        qk = "" if self.attn.qk_norm is None else f", qk_norm={self.attn.qk_norm!r}"
        return f"position={self.position!r}, norm={self.norm_kind!r}, causal={self.attn.causal}{qk}"

    def _sublayers(self) -> tuple[tuple[Module, Any, Dropout, Any], tuple[Module, Any, Dropout, Any]]:
        """(F, Norm, drop, Norm_out) for the two sub-layers, in forward order."""
        (norm1, out1), (norm2, out2) = self._norms_of(1), self._norms_of(2)
        return ((self.attn, norm1, self.drop1, out1), (self.ffn, norm2, self.drop2, out2))

    def forward(self, x: ArrayLike, key_padding_mask: ArrayLike | None = None,
                attn_mask: ArrayLike | None = None) -> np.ndarray:
        x = float_input(x, "TransformerBlock")
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"TransformerBlock expects input of shape (B, T, {self.d_model}), got {x.shape}")
        B, T, _ = x.shape
        self.attn.check_masks(key_padding_mask, attn_mask, B, T, T)  # before any sub-layer changes its cache
        self._cache = (x.shape, x.dtype)
        (attn, norm1, drop1, out1), (ffn, norm2, drop2, out2) = self._sublayers()
        x = self._residual(x, lambda h: attn(h, key_padding_mask, attn_mask), norm1, drop1, out1)  # (B, T, C)
        return self._residual(x, ffn, norm2, drop2, out2)  # (B, T, C)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        shape, in_dtype = self._cached()
        dy = check_upstream(dy, shape, "TransformerBlock").astype(in_dtype, copy=False)
        for f, norm, drop, out_norm in reversed(self._sublayers()):
            dy = self._residual_backward(dy, f.backward, norm, drop, out_norm)
        return dy


class TinyTransformer(Module):
    r"""A small decoder-only Transformer language model: integer tokens in, next-token logits out.

    Shapes: tokens (B, T) integers in [0, vocab_size), T <= max_len; logits (B, T, vocab_size)::

        x = tok_emb(tokens)                  (B, T, d_model)   Embedding
        x = pos_emb(x)                       (B, T, d_model)   x + learned position vectors
        x = blocks(x)                        (B, T, d_model)   n_layers TransformerBlocks
        x = norm_f(x)                        (B, T, d_model)   only for position="pre" or "peri"
        logits = head(x)                     (B, T, vocab_size)

    ``backward(dlogits)`` runs the same steps in reverse and accumulates every parameter's
    gradient; the integer tokens have none, so it returns None. A Pre-Norm stack needs the
    final norm because its residual stream is never normalised otherwise; Post-Norm and
    DeepNorm blocks already end in a norm. A Peri-LN stack's residual stream is not normalised
    either (only what each branch adds to it), so it gets the final norm too, as Gemma 2 and 3
    do (a final RMSNorm after the last block, before the output head). ``qk_norm`` is every
    block's attention's. ``model.blocks`` is a ``Sequential`` whose children
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
                 norm_tier: str = "reference", qk_norm: str | None = None) -> None:
        who = "TinyTransformer"
        vocab_size = positive_int(vocab_size, "vocab_size", who)
        d_model = positive_int(d_model, "d_model", who)
        n_layers = positive_int(n_layers, "n_layers", who)
        n_heads = positive_int(n_heads, "n_heads", who)
        max_len = positive_int(max_len, "max_len", who)
        self.vocab_size, self.max_len = vocab_size, max_len
        self.position = position
        rng = make_rng(rng)
        self.tok_emb = Embedding(vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.pos_emb = PositionalEmbedding(max_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.blocks = Sequential(*[
            TransformerBlock(d_model, n_heads, d_ff, norm, position, dropout, n_layers, rng, dtype, activation,
                             norm_tier, qk_norm=qk_norm)
            for _ in range(n_layers)
        ])
        if position in ("pre", "peri"):
            self.norm_f = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.head = Linear(d_model, vocab_size, rng=rng, dtype=dtype)

    def _stages(self) -> list[Module]:
        """The modules a forward pass runs through, in order."""
        return [m for m in (self.tok_emb, self.pos_emb, self.blocks, getattr(self, "norm_f", None), self.head)
                if m is not None]

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


class TransformerDecoderBlock(ResidualSublayers):
    r"""A Transformer decoder block: causal self-attention, cross-attention to the encoder's output
    (the memory), then a feed-forward; each sub-layer wrapped with its residual connection and a
    norm placed by ``position``, exactly as in ``TransformerBlock`` (the same ``_residual``).

    Shapes: x and y (B, Tt, C) the target stream, memory (B, Ts, C) the encoder's output,
    C = d_model. The three sub-layers, in forward order::

        SA(h)  = self_attn(h, tgt_key_padding_mask, tgt_mask)        causal: key j > query i masked
        CA(h)  = cross_attn(h, memory, memory, memory_key_padding_mask, memory_mask)
        FF(h)  = ffn(h)

    ``causal=True`` (the default) is a decoder's: position i of the target sees positions <= i.
    ``causal=False`` leaves the self-attention unmasked, as ``torch.nn.TransformerDecoderLayer``
    is by itself (its ``tgt_mask`` is what makes it causal there).

    Forward by position (drop1..3 the residual dropouts)::

        "pre"        h1 = x  + drop1(SA(norm1(x)))
                     h2 = h1 + drop2(CA(norm2(h1)))                  memory is not normalised
                     y  = h2 + drop3(FF(norm3(h2)))
        "post"       h1 = norm1(x  + drop1(SA(x)))
                     h2 = norm2(h1 + drop2(CA(h1)))
                     y  = norm3(h2 + drop3(FF(h2)))
        "deepnorm"   as "post" with alpha * x, alpha * h1, alpha * h2 on the identity path
        "none"       h1 = x + drop1(SA(x)),  h2 = h1 + drop2(CA(h1)),  y = h2 + drop3(FF(h2))
        "peri"       h1 = x  + norm1_out(drop1(SA(norm1(x))))
                     h2 = h1 + norm2_out(drop2(CA(norm2(h1))))
                     y  = h2 + norm3_out(drop3(FF(norm3(h2))))

    Backward, the forward read bottom to top (G'(g) is G's backward applied to g; dL/dy = dy)::

        "pre"        dh2 = dy  + norm3'(FF'(drop3'(dy)))
                     dq, dk, dv = CA'(drop2'(dh2))                   query, key, value gradients
                     dh1 = dh2 + norm2'(dq)
                     dx  = dh1 + norm1'(SA'(drop1'(dh1)))
                     dmemory = dk + dv
        "post"       dz3 = norm3'(dy);   dh2 = dz3 + FF'(drop3'(dz3))
                     dz2 = norm2'(dh2);  dq, dk, dv = CA'(drop2'(dz2));  dh1 = dz2 + dq
                     dz1 = norm1'(dh1);  dx  = dz1 + SA'(drop1'(dz1))
                     dmemory = dk + dv
        "deepnorm"   as "post" with alpha * dz3, alpha * dz2, alpha * dz1
        "none"       as "pre" without the norms
        "peri"       as "pre" with each branch's gradient first through its output norm:
                     dh2 = dy + norm3'(FF'(drop3'(norm3_out'(dy)))), dq, dk, dv = CA'(drop2'(norm2_out'(dh2))), ...

    The memory enters the cross-attention twice, as its keys and as its values, so its gradient
    is the sum of the two (dk + dv); dq goes on down the target stream. In a stack of decoder
    blocks all reading the same memory, the encoder receives the sum over the blocks.

    PyTorch: ``torch.nn.TransformerDecoderLayer(d_model, n_heads, d_ff, dropout=0.0,
    activation="relu" or "gelu", batch_first=True, norm_first=(position == "pre"))`` with
    ``norm="layernorm"`` computes the same, given ``tgt_mask`` = the causal mask (torch's layer
    is not causal by itself: ``tgt_is_causal=True`` only hints that ``tgt_mask`` is, and without
    a ``tgt_mask`` it raises, measured on torch 2.13; here the self-attention is causal by
    construction and ``tgt_mask`` is added on top of it). torch's
    feed-forward also has a dropout between its two linears, which this block does not
    (equal with dropout 0 or in eval mode). ``normcore.torch_bridge.to_torch`` builds that
    layer with these weights (``torch_bridge.decoder_keys`` says where each one goes).

    Masks follow ``torch.nn.MultiheadAttention``: boolean True = not allowed to attend, a
    floating mask is added to the scores. tgt_key_padding_mask (B, Tt) and tgt_mask (Tt, Tt) or
    (B, H, Tt, Tt) are the self-attention's key_padding_mask and attn_mask; memory_key_padding_mask
    (B, Ts) and memory_mask (Tt, Ts) or (B, H, Tt, Ts) the cross-attention's. All are checked
    (by the attentions' ``check_masks``) before any sub-layer runs. A query whose every key is
    masked (a sequence whose memory is all padding) gives NaN, as ``MultiheadAttention`` says;
    torch's decoder layer runs its attention through ``F.scaled_dot_product_attention``, which
    gives 0 attention there, so its output stays finite (measured on torch 2.13, in training and
    in eval). Don't mask a whole row.

    ``d_ff`` defaults to 4 * d_model; ``norm`` "layernorm" or "rmsnorm" from ``norm_tier``;
    ``activation`` the feed-forward's; ``bias=False`` drops every bias (torch's ``bias=False``).
    DeepNorm uses DeepNet's decoder values for three sub-layers, alpha = (3N)**(1/4) and gain
    beta = (12N)**(-1/4) for the feed-forward and both attentions' value and output projections,
    N = ``n_layers`` (required for "deepnorm"; see ``deepnorm_constants``). Children: norm1,
    self_attn, norm2, cross_attn, norm3, ffn (no norms for "none"; "peri" adds norm1_out after
    self_attn, norm2_out after cross_attn, norm3_out after ffn), drop1, drop2, drop3.
    ``qk_norm`` (None, "rmsnorm", "layernorm") is both attentions': the self-attention's queries
    and keys, and the cross-attention's queries (from the target) and keys (from the memory).
    Cache: the shapes and dtypes of x and memory; each child caches its own.
    """

    self_attn: MultiheadSelfAttention
    cross_attn: MultiheadAttention
    ffn: FeedForward

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, n_layers: int | None = None,
                 rng: RngLike = None, dtype: DTypeLike = np.float64, activation: str = "gelu",
                 norm_tier: str = "reference", bias: bool = True, qk_norm: str | None = None,
                 causal: bool = True) -> None:
        causal = flag(causal, "causal", "TransformerDecoderBlock")
        self._dtype = dtype
        dropout, qk_norm = self._setup("TransformerDecoderBlock", d_model, d_ff, norm, norm_tier, position, dropout,
                                       n_layers, bias, qk_norm, sublayers=3)
        rng = make_rng(rng)
        C, beta = self.d_model, self._beta
        self._add_sublayer(1, "self_attn", self_attention(causal, C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                          dtype=dtype, qk_norm=qk_norm))
        self._add_sublayer(2, "cross_attn", MultiheadAttention(C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                               dtype=dtype, qk_norm=qk_norm))
        self._add_sublayer(3, "ffn", FeedForward(C, self.d_ff, activation, self.bias, gain=beta, rng=rng,
                                                 dtype=dtype))
        self.drop1 = Dropout(dropout, rng=rng)
        self.drop2 = Dropout(dropout, rng=rng)
        self.drop3 = Dropout(dropout, rng=rng)

    def extra_repr(self) -> str:
        qk = "" if self.self_attn.qk_norm is None else f", qk_norm={self.self_attn.qk_norm!r}"
        return f"position={self.position!r}, norm={self.norm_kind!r}{qk}"

    def forward(self, x: ArrayLike, memory: ArrayLike, tgt_key_padding_mask: ArrayLike | None = None,
                memory_key_padding_mask: ArrayLike | None = None, tgt_mask: ArrayLike | None = None,
                memory_mask: ArrayLike | None = None) -> np.ndarray:
        who, C = "TransformerDecoderBlock", self.d_model
        x = float_input(x, who)
        if x.ndim != 3 or x.shape[-1] != C:
            raise ValueError(f"{who} expects the target x of shape (B, Tt, {C}), got {x.shape}")
        memory = float_input(memory, f"{who} (memory)")
        B, Tt, _ = x.shape
        if memory.ndim != 3 or memory.shape[0] != B or memory.shape[-1] != C:
            raise ValueError(f"{who} expects the memory of shape (B, Ts, {C}) with the target's B = {B}, "
                             f"got {memory.shape}")
        Ts = memory.shape[1]
        for attn, key_padding_mask, attn_mask, Tk, names in (  # every mask, before any sub-layer runs
                (self.self_attn, tgt_key_padding_mask, tgt_mask, Tt, "tgt_key_padding_mask and tgt_mask are the "
                 "self-attention's"),
                (self.cross_attn, memory_key_padding_mask, memory_mask, Ts, "memory_key_padding_mask and memory_mask "
                 "are the cross-attention's")):
            try:
                attn.check_masks(key_padding_mask, attn_mask, B, Tt, Tk)
            except (TypeError, ValueError) as err:
                raise type(err)(f"{who}: {names} key_padding_mask and attn_mask: {err}") from None
        self._cache = (x.shape, x.dtype, memory.shape, memory.dtype)
        memory = memory.astype(x.dtype, copy=False)  # (B, Ts, C), computed in the target's dtype
        (norm1, out1), (norm2, out2), (norm3, out3) = (self._norms_of(i) for i in (1, 2, 3))

        def self_attention(h: np.ndarray) -> np.ndarray:
            return self.self_attn(h, tgt_key_padding_mask, tgt_mask)  # (B, Tt, C)

        def cross_attention(h: np.ndarray) -> np.ndarray:
            return self.cross_attn(h, memory, memory, memory_key_padding_mask, memory_mask)  # (B, Tt, C)

        x = self._residual(x, self_attention, norm1, self.drop1, out1)  # (B, Tt, C)
        x = self._residual(x, cross_attention, norm2, self.drop2, out2)  # (B, Tt, C)
        return self._residual(x, self.ffn, norm3, self.drop3, out3)  # (B, Tt, C)

    def backward(self, dy: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """(dL/dx, dL/dmemory), each in its input's shape and dtype."""
        x_shape, x_dtype, memory_shape, memory_dtype = self._cached()
        dy = check_upstream(dy, x_shape, "TransformerDecoderBlock").astype(x_dtype, copy=False)
        (norm1, out1), (norm2, out2), (norm3, out3) = (self._norms_of(i) for i in (1, 2, 3))
        dmemory = []

        def cross_attention_backward(dh: np.ndarray) -> np.ndarray:
            dquery, dkey, dvalue = self.cross_attn.backward(dh)  # (B, Tt, C), (B, Ts, C), (B, Ts, C)
            dmemory.append(dkey + dvalue)  # (B, Ts, C): memory is both the keys and the values
            return dquery

        dy = self._residual_backward(dy, self.ffn.backward, norm3, self.drop3, out3)  # (B, Tt, C)
        dy = self._residual_backward(dy, cross_attention_backward, norm2, self.drop2, out2)  # (B, Tt, C)
        dx = self._residual_backward(dy, self.self_attn.backward, norm1, self.drop1, out1)  # (B, Tt, C)
        return dx.astype(x_dtype, copy=False), dmemory[0].astype(memory_dtype, copy=False)


class TinySeq2Seq(Module):
    r"""A small encoder-decoder Transformer: source tokens in, logits over the target vocabulary
    out, the decoder reading the encoder's output through cross-attention.

    Shapes: src (B, Ts) integers in [0, src_vocab_size), Ts <= max_src_len; tgt (B, Tt) integers
    in [0, tgt_vocab_size), Tt <= max_tgt_len, the target shifted right (a start token first,
    teacher forcing); logits (B, Tt, tgt_vocab_size)::

        encode:  s = src_emb(src)                      (B, Ts, C)   Embedding
                 s = src_pos(s)                        (B, Ts, C)   + learned positions
                 s = encoder(s, src_key_padding_mask)  (B, Ts, C)   TransformerBlocks, causal=False
                 memory = enc_norm(s)                  (B, Ts, C)   only for position="pre" or "peri"
        decode:  t = tgt_emb(tgt)                      (B, Tt, C)
                 t = tgt_pos(t)                        (B, Tt, C)
                 t = decoder(t, memory)                (B, Tt, C)   TransformerDecoderBlocks, each
                                                                    cross-attending to memory
                 t = dec_norm(t)                       (B, Tt, C)   only for position="pre" or "peri"
                 logits = head(t)                      (B, Tt, tgt_vocab_size)

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
    both depths, are not used. ``qk_norm`` is every attention's (``TransformerBlock``'s).
    """

    def __init__(self, src_vocab_size: int, tgt_vocab_size: int, d_model: int, n_layers: int, n_heads: int,
                 max_src_len: int, max_tgt_len: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 activation: str = "gelu", embedding_std: float = 1.0, norm_tier: str = "reference",
                 n_decoder_layers: int | None = None, qk_norm: str | None = None) -> None:
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
        self.position = position
        rng = make_rng(rng)
        self.src_emb = Embedding(self.src_vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.src_pos = PositionalEmbedding(self.max_src_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.encoder = Sequential(*[
            TransformerBlock(d_model, n_heads, d_ff, norm, position, dropout, n_layers, rng, dtype, activation,
                             norm_tier, causal=False, qk_norm=qk_norm)
            for _ in range(n_layers)
        ])
        if position in ("pre", "peri"):
            self.enc_norm = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.tgt_emb = Embedding(self.tgt_vocab_size, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.tgt_pos = PositionalEmbedding(self.max_tgt_len, d_model, rng=rng, dtype=dtype, std=embedding_std)
        self.decoder = Sequential(*[
            TransformerDecoderBlock(d_model, n_heads, d_ff, norm, position, dropout, n_decoder_layers, rng, dtype,
                                    activation, norm_tier, qk_norm=qk_norm)
            for _ in range(n_decoder_layers)
        ])
        if position in ("pre", "peri"):
            self.dec_norm = norm_class(norm, norm_tier)(d_model, dtype=dtype)
        self.head = Linear(d_model, self.tgt_vocab_size, rng=rng, dtype=dtype)

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
        return self.head(t if dec_norm is None else dec_norm(t))  # (B, Tt, V)

    def forward(self, src: ArrayLike, tgt: ArrayLike, src_key_padding_mask: ArrayLike | None = None) -> np.ndarray:
        src_ids, tgt_ids = self._check(src, tgt, src_key_padding_mask)  # every input, before any child runs
        assert tgt_ids is not None
        logits = self._decode(tgt_ids, self._encode(src_ids, src_key_padding_mask), src_key_padding_mask)
        self._cache = logits.shape
        return logits  # (B, Tt, V)

    def backward(self, dlogits: ArrayLike) -> None:
        shape = self._cached()
        dt = check_upstream(dlogits, shape, "TinySeq2Seq")
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
