"""The feed-forward sub-layer, the Transformer block with its norm in four positions, and a
small decoder-only language model built from them."""

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import RngLike, as_array, check_upstream, flag, float_input, make_rng, positive_int, real_number
from ..module import Module, Sequential
from ..norms import LayerNorm, RMSNorm
from .activations import ACTIVATIONS
from .attention import CausalSelfAttention, MultiheadSelfAttention
from .dropout import Dropout
from .embedding import Embedding, PositionalEmbedding, index_input
from .linear import Linear

NORMS = ("layernorm", "rmsnorm")
NORM_TIERS = ("reference", "fast")


def norm_class(norm: str, tier: str = "reference") -> type[LayerNorm] | type[RMSNorm]:
    """The class of the norm named ``norm`` ("layernorm" or "rmsnorm") in ``tier``: "reference"
    (``normcore.norms``, the readable layers) or "fast" (``normcore.fast``, the same layers with
    cache-blocked kernels, for experiments bound by time; imported only when asked for)."""
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}, got {norm!r}")
    if tier not in NORM_TIERS:
        raise ValueError(f"norm_tier must be one of {NORM_TIERS}, got {tier!r}")
    if tier == "fast":
        from .. import fast
        return {"layernorm": fast.LayerNorm, "rmsnorm": fast.RMSNorm}[norm]
    return {"layernorm": LayerNorm, "rmsnorm": RMSNorm}[norm]
POSITIONS = ("pre", "post", "deepnorm", "none")


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


def deepnorm_constants(n_layers: int) -> tuple[float, float]:
    """DeepNet's constants for a decoder-only stack of N blocks: alpha = (2N)**(1/4), beta = (8N)**(-1/4).

    alpha up-weights the identity path x inside the norm, Norm(alpha * x + F(x)); beta
    shrinks the initialisation of the feed-forward and of the attention value and output
    projections. Together they bound how much one update can change the output, which lets
    Post-Norm-style blocks train at depths where plain Post-Norm diverges (Wang et al., 2022).
    """
    n_layers = positive_int(n_layers, "n_layers", "deepnorm_constants")
    return (2.0 * n_layers) ** 0.25, (8.0 * n_layers) ** -0.25


class ResidualSublayers(Module):
    """The residual wrapping every Transformer block shares: a sub-layer F with its residual
    connection and its norm at ``self.position`` ("pre", "post", "deepnorm", "none"), with
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

    def _residual(self, x: np.ndarray, f: Callable[[np.ndarray], np.ndarray], norm: Any,
                  drop: Dropout) -> np.ndarray:
        if self.position == "pre":
            return x + drop(f(norm(x)))
        if self.position == "none":
            return x + drop(f(x))
        return norm(self.alpha * x + drop(f(x)))  # post (alpha = 1) and deepnorm

    def _residual_backward(self, dy: np.ndarray, f_backward: Callable[[np.ndarray], np.ndarray], norm: Any,
                           drop: Dropout) -> np.ndarray:
        if self.position == "pre":
            return dy + norm.backward(f_backward(drop.backward(dy)))  # (B, T, C)
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

    where G'(g) is G's backward applied to the gradient g. In Pre-Norm the identity path
    x -> y carries dy to the input untouched; in Post-Norm and DeepNorm every gradient first
    goes through the norm's backward, after the residual add. DeepNorm uses alpha = (2N)**(1/4)
    and initialises the feed-forward and the attention value and output projections with gain
    beta = (8N)**(-1/4), N = ``n_layers`` (required for "deepnorm").

    Shapes: x and y (B, T, d_model). ``d_ff`` defaults to 4 * d_model; ``norm`` is "layernorm"
    or "rmsnorm", from ``norm_tier`` "reference" (default) or "fast" (see ``norm_class``);
    ``activation`` is the feed-forward's ("gelu" the exact form, "gelu_tanh", or e.g.
    "relu" as in the original Transformer). Children: norm1, attn, norm2, ffn (norm1 and norm2 absent for "none"),
    drop1, drop2 (``Dropout(dropout)``, each uses its own cached mask in backward). ``bias=False``
    drops the biases of the attention and feed-forward projections and of the LayerNorms (as
    ``nn.TransformerEncoderLayer(bias=False)``).

    ``forward(x, key_padding_mask=None, attn_mask=None)`` hands the masks to the attention
    (``MultiheadSelfAttention``'s convention: key_padding_mask (B, T), attn_mask (T, T) or
    (B, H, T, T), a boolean True = masked out, a floating mask added to the scores); they are
    checked before any sub-layer runs. The masks are constants: backward is unchanged. A query
    whose every key is masked out gives NaN, as ``MultiheadSelfAttention`` says; PyTorch's
    ``nn.TransformerEncoderLayer`` gives NaN there only on its fused fast path (eval mode under
    no_grad), while in training its attention (``F.scaled_dot_product_attention``) mixes no
    value there (A = 0, the attention's output is the output projection's bias, and no gradient
    flows back through it; measured on torch 2.13). Give every query at least one key.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, n_layers: int | None = None,
                 rng: RngLike = None, dtype: DTypeLike = np.float64, activation: str = "gelu",
                 norm_tier: str = "reference", causal: bool = True, bias: bool = True) -> None:
        Norm = norm_class(norm, norm_tier)
        causal = flag(causal, "causal", "TransformerBlock")
        self.bias = flag(bias, "bias", "TransformerBlock")
        if position not in POSITIONS:
            raise ValueError(f"position must be one of {POSITIONS}, got {position!r}")
        if n_layers is not None:
            n_layers = positive_int(n_layers, "n_layers", "TransformerBlock")
        if position == "deepnorm" and n_layers is None:
            raise ValueError("position='deepnorm' needs n_layers, the number of blocks N >= 1, got None")
        dropout = real_number(dropout, "dropout", "TransformerBlock", 0.0, 1.0)
        self.d_model = positive_int(d_model, "d_model", "TransformerBlock")
        self.position, self.norm_kind, self.n_layers = position, norm, n_layers
        self.d_ff = 4 * self.d_model if d_ff is None else positive_int(d_ff, "d_ff", "TransformerBlock")
        self.alpha, beta = (deepnorm_constants(n_layers) if position == "deepnorm" and n_layers is not None
                            else (1.0, 1.0))  # n_layers is not None for "deepnorm": checked above
        rng = make_rng(rng)
        norm_bias = {"bias": self.bias} if norm == "layernorm" else {}  # RMSNorm has no bias
        if position != "none":
            self.norm1 = Norm(self.d_model, dtype=dtype, **norm_bias)
        self.attn = (CausalSelfAttention(self.d_model, n_heads, self.bias, value_gain=beta, rng=rng, dtype=dtype)
                     if causal else
                     MultiheadSelfAttention(self.d_model, n_heads, False, self.bias, value_gain=beta, rng=rng,
                                            dtype=dtype))
        if position != "none":
            self.norm2 = Norm(self.d_model, dtype=dtype, **norm_bias)
        self.ffn = FeedForward(self.d_model, self.d_ff, activation, self.bias, gain=beta, rng=rng, dtype=dtype)
        self.drop1 = Dropout(dropout, rng=rng)
        self.drop2 = Dropout(dropout, rng=rng)

    def extra_repr(self) -> str:
        return f"position={self.position!r}, norm={self.norm_kind!r}, causal={self.attn.causal}"

    def _sublayers(self) -> tuple[tuple[Module, Any, Dropout], tuple[Module, Any, Dropout]]:
        """(F, Norm, drop) for the two sub-layers, in forward order."""
        norms = (None, None) if self.position == "none" else (self.norm1, self.norm2)
        return ((self.attn, norms[0], self.drop1), (self.ffn, norms[1], self.drop2))

    def forward(self, x: ArrayLike, key_padding_mask: ArrayLike | None = None,
                attn_mask: ArrayLike | None = None) -> np.ndarray:
        x = float_input(x, "TransformerBlock")
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"TransformerBlock expects input of shape (B, T, {self.d_model}), got {x.shape}")
        B, T, _ = x.shape
        self.attn.check_masks(key_padding_mask, attn_mask, B, T, T)  # before any sub-layer changes its cache
        self._cache = (x.shape, x.dtype)
        (attn, norm1, drop1), (ffn, norm2, drop2) = self._sublayers()
        x = self._residual(x, lambda h: attn(h, key_padding_mask, attn_mask), norm1, drop1)  # (B, T, C)
        return self._residual(x, ffn, norm2, drop2)  # (B, T, C)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        shape, in_dtype = self._cached()
        dy = check_upstream(dy, shape, "TransformerBlock").astype(in_dtype, copy=False)
        for f, norm, drop in reversed(self._sublayers()):
            dy = self._residual_backward(dy, f.backward, norm, drop)
        return dy


class TinyTransformer(Module):
    r"""A small decoder-only Transformer language model: integer tokens in, next-token logits out.

    Shapes: tokens (B, T) integers in [0, vocab_size), T <= max_len; logits (B, T, vocab_size)::

        x = tok_emb(tokens)                  (B, T, d_model)   Embedding
        x = pos_emb(x)                       (B, T, d_model)   x + learned position vectors
        x = blocks(x)                        (B, T, d_model)   n_layers TransformerBlocks
        x = norm_f(x)                        (B, T, d_model)   only for position="pre"
        logits = head(x)                     (B, T, vocab_size)

    ``backward(dlogits)`` runs the same steps in reverse and accumulates every parameter's
    gradient; the integer tokens have none, so it returns None. A Pre-Norm stack needs the
    final norm because its residual stream is never normalised otherwise; Post-Norm and
    DeepNorm blocks already end in a norm. ``model.blocks`` is a ``Sequential`` whose children
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
                 norm_tier: str = "reference") -> None:
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
                             norm_tier)
            for _ in range(n_layers)
        ])
        if position == "pre":
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
            raise ValueError(f"sequence length T={tokens.shape[1]} exceeds max_len={self.max_len}")
        x = tokens
        for m in self._stages():
            x = m(x)
        return x  # (B, T, vocab_size)

    def backward(self, dlogits: ArrayLike) -> None:
        for m in reversed(self._stages()):
            dlogits = m.backward(dlogits)
        return None  # tok_emb.backward returned None: integer tokens have no gradient
