"""The feed-forward sub-layer, the Transformer block (encoder or causal) and the decoder block
with its cross-attention, each with its norm in one of six positions (``POSITIONS``). The small
models built from them are in ``normcore.nn.models``.

One file, though a little longer than most: both blocks are ``ResidualSublayers``, whose wiring
of the six positions (the table in ``TransformerBlock``'s docstring) each block's forward and
backward follow; a reader checks a position in one block against the other on one page.
"""

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (RngLike, check_upstream, flag, float_input, make_rng, positive_int,
                      real_number)
from ..i18n import translator
from ..module import Module
from ..norms import DyT, LayerNorm, RMSNorm
from .activations import ACTIVATIONS
from .attention import CausalSelfAttention, MultiheadAttention, MultiheadSelfAttention, qk_norm_choice
from .dropout import Dropout
from .linear import Linear

_ = translator("cli")

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
POSITIONS = ("pre", "post", "deepnorm", "none", "peri", "reordered")
NORM_SCALES = (None, "depth")


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


def check_norm_scale(who: str, position: object, norm_scale: object, layer_index: object) -> float:
    """LayerNorm Scaling's arguments checked, as a block (or a model, for each of its blocks)
    takes them: ``norm_scale`` None or "depth"; "depth" only with position "pre" and a
    ``layer_index`` l >= 1; ``layer_index`` None without it. Returns the factor on the norm's
    output, 1 / sqrt(l) (1.0 without LayerNorm Scaling)."""
    if not (norm_scale is None or (isinstance(norm_scale, str) and norm_scale in NORM_SCALES)):
        error = ValueError if isinstance(norm_scale, str) else TypeError
        raise error(_("{who}: norm_scale must be None or 'depth' (LayerNorm Scaling: each norm's output "
                      "scaled by 1 / sqrt(l), l the block's depth), got {got}")
                    .format(who=who, got=repr(norm_scale)))
    if norm_scale is None:
        if layer_index is not None:
            raise ValueError(_("{who}: layer_index is the block's depth l for norm_scale='depth'; "
                               "with norm_scale=None it must be None, got {got}")
                             .format(who=who, got=repr(layer_index)))
        return 1.0
    if position != "pre":
        raise ValueError(_("{who}: norm_scale='depth' scales the norm on each sub-layer's input, "
                           "so it needs position='pre' (as LayerNorm Scaling is published), "
                           "got position={got}").format(who=who, got=repr(position)))
    if layer_index is None:
        raise ValueError(_("{who}: norm_scale='depth' needs layer_index, the block's 1-based "
                           "depth l >= 1 (the norm's output is multiplied by 1 / sqrt(l)), "
                           "got None").format(who=who))
    return 1.0 / math.sqrt(positive_int(layer_index, "layer_index", who))


def self_attention(causal: bool, d_model: int, n_heads: int, bias: bool, **kwargs: Any) -> MultiheadSelfAttention:
    """A block's self-attention: ``CausalSelfAttention`` (a decoder's), or ``MultiheadSelfAttention``
    with ``causal=False`` (an encoder's); ``kwargs`` go to either."""
    if causal:
        return CausalSelfAttention(d_model, n_heads, bias, **kwargs)
    return MultiheadSelfAttention(d_model, n_heads, False, bias, **kwargs)


class ResidualSublayers(Module):
    """The residual wrapping every Transformer block shares: a sub-layer F with its residual
    connection and its norm at ``self.position`` ("pre", "post", "deepnorm", "none", "peri": a
    norm on F's input and ``out_norm`` on its output; "reordered": ``out_norm`` on F's output
    only), with DeepNorm's ``self.alpha`` (1 otherwise) and LayerNorm Scaling's
    ``self.depth_scale`` (1 / sqrt(l) with ``norm_scale="depth"``, 1 otherwise).
    ``TransformerBlock`` and ``TransformerDecoderBlock`` set them and call ``_residual`` once per
    sub-layer in forward, ``_residual_backward`` in reverse order in backward; the table of
    formulas is in ``TransformerBlock``'s docstring.

    ``f`` is the sub-layer as a function of its (normalised, for "pre") input, ``f_backward``
    its backward, from dL/dF to dL/d(that input): for a sub-layer with a second input (the
    decoder's cross-attention reading the encoder's memory) they are closures that take the
    other input along and collect its gradient.
    """

    position: str
    alpha: float
    depth_scale: float = 1.0
    norm_scale: str | None = None
    layer_index: int | None = None
    bias: bool
    _dtype: DTypeLike

    def _setup(self, who: str, d_model: int, d_ff: int | None, norm: str, norm_tier: str, position: str,
               dropout: float, n_layers: int | None, bias: bool, qk_norm: str | None,
               sublayers: int, norm_scale: str | None = None, layer_index: int | None = None
               ) -> tuple[float, str | None]:
        """Check the arguments every block shares and set d_model, d_ff, position, norm_kind,
        n_layers, alpha, bias, norm_scale, layer_index and depth_scale; returns (dropout,
        qk_norm) checked and DeepNorm's beta is kept in ``self._beta`` (1 for the other
        positions). ``sublayers`` is the block's count (2 for an encoder or decoder-only block,
        3 for an encoder-decoder's decoder block)."""
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
        self._set_norm_scale(who, position, norm_scale, layer_index)
        self.d_model = positive_int(d_model, "d_model", who)
        self.position, self.norm_kind, self.n_layers = position, norm, n_layers
        self.d_ff = 4 * self.d_model if d_ff is None else positive_int(d_ff, "d_ff", who)
        self.alpha, self._beta = (deepnorm_constants(n_layers, sublayers)
                                  if position == "deepnorm" and n_layers is not None else (1.0, 1.0))
        return dropout, qk_norm

    def _set_norm_scale(self, who: str, position: str, norm_scale: object, layer_index: object) -> None:
        """Check and set LayerNorm Scaling (``check_norm_scale``): norm_scale, layer_index and
        depth_scale = 1 / sqrt(layer_index) (1 without it)."""
        self.depth_scale = check_norm_scale(who, position, norm_scale, layer_index)
        if norm_scale is not None:
            self.norm_scale, self.layer_index = "depth", int(layer_index)  # type: ignore[call-overload]

    def _options_repr(self, attn: Any) -> str:
        """The attention's QK-norm and soft-cap and the block's LayerNorm Scaling, where set."""
        return attn._options_repr() + (f", norm_scale={self.norm_scale!r}, layer_index={self.layer_index}"
                                       if self.norm_scale else "")

    def _norm(self) -> Module:
        """A new norm of the block's kind over d_model (LayerNorm and DyT take the block's bias)."""
        extra = {"bias": self.bias} if self.norm_kind in ("layernorm", "dyt") else {}  # RMSNorm has no bias
        return self._Norm(self.d_model, dtype=self._dtype, **extra)

    def _add_sublayer(self, i: int, name: str, layer: Module) -> None:
        """Register sub-layer i under ``name`` with its norms, in the state dict's order: norm{i}
        on its input (every position but "none" and "reordered"), the layer, and norm{i}_out on
        its output (Peri-LN and the reordered norm)."""
        if self.position not in ("none", "reordered"):
            setattr(self, f"norm{i}", self._norm())
        setattr(self, name, layer)
        if self.position in ("peri", "reordered"):
            setattr(self, f"norm{i}_out", self._norm())

    def _norms_of(self, i: int) -> tuple[Any, Any]:
        """(norm{i}, norm{i}_out) of sub-layer i, None where the position has no such norm."""
        return getattr(self, f"norm{i}", None), getattr(self, f"norm{i}_out", None)

    def _residual(self, x: np.ndarray, f: Callable[[np.ndarray], np.ndarray], norm: Any,
                  drop: Dropout, out_norm: Any = None) -> np.ndarray:
        if self.position == "pre":
            return x + drop(f(self.depth_scale * norm(x)))  # depth_scale = 1 / sqrt(l) or 1
        if self.position == "peri":
            return x + out_norm(drop(f(norm(x))))
        if self.position == "reordered":
            return x + drop(out_norm(f(x)))
        if self.position == "none":
            return x + drop(f(x))
        return norm(self.alpha * x + drop(f(x)))  # post (alpha = 1) and deepnorm

    def _residual_backward(self, dy: np.ndarray, f_backward: Callable[[np.ndarray], np.ndarray], norm: Any,
                           drop: Dropout, out_norm: Any = None) -> np.ndarray:
        if self.position == "pre":
            return dy + norm.backward(self.depth_scale * f_backward(drop.backward(dy)))  # (B, T, C)
        if self.position == "peri":
            return dy + norm.backward(f_backward(drop.backward(out_norm.backward(dy))))  # (B, T, C)
        if self.position == "reordered":
            return dy + f_backward(out_norm.backward(drop.backward(dy)))  # (B, T, C)
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
        "reordered"  y = x + drop(Norm_out(F(x)))          dx = dy + F'(Norm_out'(drop'(dy)))

    where G'(g) is G's backward applied to the gradient g. In Pre-Norm the identity path
    x -> y carries dy to the input untouched; in Post-Norm and DeepNorm every gradient first
    goes through the norm's backward, after the residual add. DeepNorm uses alpha = (2N)**(1/4)
    and initialises the feed-forward and the attention value and output projections with gain
    beta = (8N)**(-1/4), N = ``n_layers`` (required for "deepnorm"). Peri-LN, the "sandwich"
    norm (CogView's Sandwich-LN, Ding et al. 2021; Gemma 2 and 3; Kim et al. 2025), keeps
    Pre-Norm's untouched identity path and also normalises each branch's output before it joins
    the stream, so no branch can add more than a norm's worth (gamma_out) to the residual
    stream, however large F's output grows. The reordered norm of OLMo 2 (the OLMo 2 report,
    arXiv 2501.00656, their equations h = x + RMSNorm(Attention(x)), h_out = h +
    RMSNorm(MLP(h))) keeps only that output norm: F reads the raw stream x, and only what it
    adds is normalised; the identity path is untouched, as in Pre-Norm. The residual dropout
    acts after the output norm, as in OLMo's code (allenai/OLMo, olmo/model.py,
    ``OLMoSequentialBlock`` with ``norm_after``: the norm, the dropout, then the add), where
    Peri-LN's acts before it; with dropout 0 the two orders agree. OLMo 2 pairs it with QK-norm
    over the whole projection (``qk_norm="rmsnorm", qk_norm_scope="projection"``).

    LayerNorm Scaling (Sun et al. 2025, "The Curse of Depth in Large Language Models", arXiv
    2502.05795), ``norm_scale="depth"`` with ``layer_index=l`` (the block's depth, 1-based;
    the models set it), multiplies the output of each sub-layer's input norm by 1 / sqrt(l),
    for "pre" only::

        "pre", norm_scale="depth"    y = x + drop(F(Norm(x) / sqrt(l)))
                                     dx = dy + Norm'(F'(drop'(dy)) / sqrt(l))

    Both norms of the block are scaled (the published code scales the norm before the
    attention and the one before the MLP by 1 / sqrt(layer_index + 1), layer_index counted
    from 0); the final norm of a model is not. The argument of the paper: in Pre-LN the
    stream's variance grows with depth, so a deep block's F(Norm(x)) adds less and less to
    it and the block's Jacobian nears the identity; the scale shrinks what deep blocks add.

    Shapes: x and y (B, T, d_model). ``d_ff`` defaults to 4 * d_model; ``norm`` is "layernorm"
    or "rmsnorm", from ``norm_tier`` "reference" (default) or "fast" (see ``norm_class``);
    ``activation`` is the feed-forward's ("gelu" the exact form, "gelu_tanh", or e.g.
    "relu" as in the original Transformer). Children: norm1, attn, norm2, ffn (norm1 and norm2 absent for "none"),
    drop1, drop2 (``Dropout(dropout)``, each uses its own cached mask in backward); "peri" adds
    norm1_out after attn and norm2_out after ffn (Norm_out of the table; norm1 and norm2 keep
    their Pre-Norm role). ``qk_norm`` (None, "rmsnorm", "layernorm") is the attention's (see
    ``MultiheadAttention``): each head's queries and keys normalised before 1/sqrt(D);
    ``qk_norm_scope`` ("head" or "projection") and ``attn_softcap`` are the attention's too
    (``MultiheadAttention`` describes them); "reordered" adds norm1_out and norm2_out only
    (no norm1, norm2). ``bias=False``
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
                 qk_norm: str | None = None, qk_norm_scope: str = "head", attn_softcap: float | None = None,
                 norm_scale: str | None = None, layer_index: int | None = None) -> None:
        causal = flag(causal, "causal", "TransformerBlock")
        self._dtype = dtype
        dropout, qk_norm = self._setup("TransformerBlock", d_model, d_ff, norm, norm_tier, position, dropout,
                                       n_layers, bias, qk_norm, sublayers=2, norm_scale=norm_scale,
                                       layer_index=layer_index)
        rng = make_rng(rng)
        C, beta = self.d_model, self._beta
        self._add_sublayer(1, "attn", self_attention(causal, C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                     dtype=dtype, qk_norm=qk_norm, qk_norm_scope=qk_norm_scope,
                                                     attn_softcap=attn_softcap))
        self._add_sublayer(2, "ffn", FeedForward(C, self.d_ff, activation, self.bias, gain=beta, rng=rng,
                                                 dtype=dtype))
        self.drop1 = Dropout(dropout, rng=rng)
        self.drop2 = Dropout(dropout, rng=rng)

    def extra_repr(self) -> str:
        return (f"position={self.position!r}, norm={self.norm_kind!r}, causal={self.attn.causal}"
                f"{self._options_repr(self.attn)}")

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
        "reordered"  h1 = x  + drop1(norm1_out(SA(x)))
                     h2 = h1 + drop2(norm2_out(CA(h1)))               memory is not normalised
                     y  = h2 + drop3(norm3_out(FF(h2)))
        "pre" with norm_scale="depth": each normk(.) output times 1 / sqrt(layer_index)

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
        "reordered"  as "peri" without the input norms, each dropout after its output norm:
                     dh2 = dy + FF'(norm3_out'(drop3'(dy))), dq, dk, dv = CA'(norm2_out'(drop2'(dh2))), ...

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
    and keys, and the cross-attention's queries (from the target) and keys (from the memory);
    so are ``qk_norm_scope`` and ``attn_softcap``. "reordered" has norm1_out, norm2_out and
    norm3_out only; ``norm_scale="depth"`` with ``layer_index`` scales norm1, norm2 and norm3
    of a "pre" block by 1 / sqrt(layer_index) (``TransformerBlock`` has the sources).
    Cache: the shapes and dtypes of x and memory; each child caches its own.
    """

    self_attn: MultiheadSelfAttention
    cross_attn: MultiheadAttention
    ffn: FeedForward

    def __init__(self, d_model: int, n_heads: int, d_ff: int | None = None, norm: str = "layernorm",
                 position: str = "pre", dropout: float = 0.0, n_layers: int | None = None,
                 rng: RngLike = None, dtype: DTypeLike = np.float64, activation: str = "gelu",
                 norm_tier: str = "reference", bias: bool = True, qk_norm: str | None = None,
                 causal: bool = True, qk_norm_scope: str = "head", attn_softcap: float | None = None,
                 norm_scale: str | None = None, layer_index: int | None = None) -> None:
        causal = flag(causal, "causal", "TransformerDecoderBlock")
        self._dtype = dtype
        dropout, qk_norm = self._setup("TransformerDecoderBlock", d_model, d_ff, norm, norm_tier, position, dropout,
                                       n_layers, bias, qk_norm, sublayers=3, norm_scale=norm_scale,
                                       layer_index=layer_index)
        rng = make_rng(rng)
        C, beta = self.d_model, self._beta
        options: dict[str, Any] = {"qk_norm": qk_norm, "qk_norm_scope": qk_norm_scope, "attn_softcap": attn_softcap}
        self._add_sublayer(1, "self_attn", self_attention(causal, C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                          dtype=dtype, **options))
        self._add_sublayer(2, "cross_attn", MultiheadAttention(C, n_heads, self.bias, value_gain=beta, rng=rng,
                                                               dtype=dtype, **options))
        self._add_sublayer(3, "ffn", FeedForward(C, self.d_ff, activation, self.bias, gain=beta, rng=rng,
                                                 dtype=dtype))
        self.drop1 = Dropout(dropout, rng=rng)
        self.drop2 = Dropout(dropout, rng=rng)
        self.drop3 = Dropout(dropout, rng=rng)

    def extra_repr(self) -> str:
        return f"position={self.position!r}, norm={self.norm_kind!r}{self._options_repr(self.self_attn)}"

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
