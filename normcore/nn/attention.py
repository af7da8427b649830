"""Multi-head attention, cross or self, causal or not, with key padding and attention masks,
and its backward pass written out step by step.

``MultiheadAttention`` is the general layer (queries from one sequence, keys and values from
another, as ``torch.nn.MultiheadAttention``); ``MultiheadSelfAttention`` is the same layer with
query = key = value = x, and ``CausalSelfAttention`` its causal case. The arithmetic is written
once, in ``_Attention``, and its docstring (on ``MultiheadAttention``) derives it.

One file, though longer than most: the derivation (``MultiheadAttention``'s docstring, about 180
lines) and the arithmetic it derives (``_Attention``) read together, top to bottom, and the
self-attention classes are a few lines on top of them.
"""

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (RngLike, as_array, check_upstream, compute_dtype, flag, float_input, make_rng,
                      positive_int, real_number)
from ..i18n import translator
from ..module import Module, Parameter
from ..norms import LayerNorm, RMSNorm
from .activations import softmax, softmax_backward
from .linear import Linear
from .softcap import softcap, softcap_backward, softcap_value

_ = translator("cli")

QK_NORMS = ("rmsnorm", "layernorm")
QK_NORM_SCOPES = ("head", "projection")


def qk_norm_choice(qk_norm: object, who: str) -> str | None:
    """``qk_norm`` checked: None, "rmsnorm" or "layernorm"; an error saying so for anything else."""
    if qk_norm is None or (isinstance(qk_norm, str) and qk_norm in QK_NORMS):
        return qk_norm
    error = ValueError if isinstance(qk_norm, str) else TypeError
    raise error(f"{who}: qk_norm must be None, 'rmsnorm' or 'layernorm', got {qk_norm!r}")


def qk_norm_scope_choice(scope: object, who: str) -> str:
    """``qk_norm_scope`` checked: "head" or "projection"; an error saying so for anything else."""
    if isinstance(scope, str) and scope in QK_NORM_SCOPES:
        return scope
    error = ValueError if isinstance(scope, str) else TypeError
    raise error(_("{who}: qk_norm_scope must be 'head' (each head's q and k over its D channels) or "
                  "'projection' (q and k over all E channels, before the heads are split), got {got}")
                .format(who=who, got=repr(scope)))


class _Attention(Module):
    """The parameters and the arithmetic of multi-head attention, shared by ``MultiheadAttention``
    (three inputs) and ``MultiheadSelfAttention`` (one input used three times). The formulas,
    the masks and the backward are derived in ``MultiheadAttention``'s docstring; ``_attend``
    and ``_attend_backward`` follow it line by line."""

    bias_k: Parameter | None
    bias_v: Parameter | None
    q_norm: LayerNorm | RMSNorm | None
    k_norm: LayerNorm | RMSNorm | None

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True, add_bias_kv: bool = False,
                 add_zero_attn: bool = False, kdim: int | None = None, vdim: int | None = None,
                 causal: bool = False, init: str = "xavier", value_gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64, qk_norm: str | None = None, qk_norm_scope: str = "head",
                 attn_softcap: float | None = None) -> None:
        who = type(self).__name__
        self.qk_norm = qk_norm_choice(qk_norm, who)
        self.qk_norm_scope = qk_norm_scope_choice(qk_norm_scope, who)
        if self.qk_norm is None and self.qk_norm_scope != "head":
            raise ValueError(_("{who}: qk_norm_scope={scope} says over which channels qk_norm normalises; "
                               "it needs qk_norm='rmsnorm' or 'layernorm', got qk_norm=None")
                             .format(who=who, scope=repr(self.qk_norm_scope)))
        self.attn_softcap = softcap_value(attn_softcap, "attn_softcap", who, allow_none=True)
        embed_dim = positive_int(embed_dim, "embed_dim", who)
        num_heads = positive_int(num_heads, "num_heads", who)
        if embed_dim % num_heads:
            raise ValueError(f"{who}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        bias = flag(bias, "bias", who)
        self.add_bias_kv = flag(add_bias_kv, "add_bias_kv", who)
        self.add_zero_attn = flag(add_zero_attn, "add_zero_attn", who)
        self.causal = flag(causal, "causal", who)
        self.kdim = embed_dim if kdim is None else positive_int(kdim, "kdim", who)
        self.vdim = embed_dim if vdim is None else positive_int(vdim, "vdim", who)
        value_gain = real_number(value_gain, "value_gain", who)
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        E = embed_dim
        rng = make_rng(rng)
        # see MultiheadAttention's docstring: a key bias matters only where it is not a per-row constant
        key_bias = bias and (self.add_bias_kv or self.add_zero_attn or self.qk_norm is not None)
        self.q = Linear(E, E, bias, init, 1.0, rng, dtype)
        self.k = Linear(self.kdim, E, key_bias, init, 1.0, rng, dtype)
        self.v = Linear(self.vdim, E, bias, init, value_gain, rng, dtype)
        self.o = Linear(E, E, bias, init, value_gain, rng, dtype)
        if self.add_bias_kv:  # torch's xavier_normal_ on a (1, 1, E) tensor: std = sqrt(2 / (E + E))
            self.bias_k = Parameter(rng.normal(0.0, math.sqrt(1.0 / E), (1, 1, E)), dtype=dtype)
            self.bias_v = Parameter(rng.normal(0.0, math.sqrt(1.0 / E), (1, 1, E)), dtype=dtype)
        else:
            self.bias_k = self.bias_v = None
        if self.qk_norm is None:
            self.q_norm = self.k_norm = None
        else:  # per head: one weight (D,) shared by every head; per projection: (E,); a LayerNorm bias where
            # it matters (docstring)
            width = self.head_dim if self.qk_norm_scope == "head" else E
            self.q_norm = (RMSNorm(width, dtype=dtype) if self.qk_norm == "rmsnorm" else
                           LayerNorm(width, bias=bias, dtype=dtype))
            self.k_norm = (RMSNorm(width, dtype=dtype) if self.qk_norm == "rmsnorm" else
                           LayerNorm(width, bias=bias and self.add_zero_attn, dtype=dtype))

    def extra_repr(self) -> str:
        extra = "".join(f", {name}={getattr(self, name)!r}" for name, default in
                        (("kdim", self.embed_dim), ("vdim", self.embed_dim), ("add_bias_kv", False),
                         ("add_zero_attn", False), ("qk_norm", None), ("qk_norm_scope", "head"),
                         ("attn_softcap", None)) if getattr(self, name) != default)
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, causal={self.causal}{extra}"

    def _options_repr(self) -> str:
        """qk_norm, qk_norm_scope and attn_softcap where they are not the defaults."""
        return "".join(f", {name}={getattr(self, name)!r}" for name, default in
                       (("qk_norm", None), ("qk_norm_scope", "head"), ("attn_softcap", None))
                       if getattr(self, name) != default)

    def _split_heads(self, t: np.ndarray) -> np.ndarray:
        """(B, T, E) -> (B, H, T, D)."""
        B, T, _ = t.shape
        return t.reshape(B, T, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def _merge_heads(self, t: np.ndarray) -> np.ndarray:
        """(B, H, T, D) -> (B, T, E)."""
        B, _, T, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, self.embed_dim)

    def _additive_mask(self, key_padding_mask: ArrayLike | None, attn_mask: ArrayLike | None, B: int, Tq: int,
                       Tk: int, dtype: DTypeLike) -> np.ndarray | None:
        """Check the masks and combine them (and the causal mask) into one additive mask M,
        broadcastable to (B, H, Tq, Tk), or None when nothing is masked. A new array: the
        caller's masks are read, never kept. The columns of the added keys (bias_kv, zero_attn)
        come later, in ``_attend``."""
        who, H = type(self).__name__, self.num_heads
        M = None
        for mask, name, shapes in (
            (key_padding_mask, "key_padding_mask", [(B, Tk)]),
            (attn_mask, "attn_mask", [(Tq, Tk), (B * H, Tq, Tk), (B, H, Tq, Tk)]),
        ):
            if mask is None:
                continue
            mask = as_array(mask, who, name)
            if mask.dtype != np.bool_ and not np.issubdtype(mask.dtype, np.floating):
                raise TypeError(
                    f"{who}: {name} must be boolean (True = not allowed to attend) or floating "
                    f"(added to the scores), got dtype {mask.dtype}"
                )
            if mask.shape not in shapes:
                expected = " or ".join(str(s) for s in shapes)
                raise ValueError(f"{who}: {name} must have shape {expected} for B = {B} sequences, "
                                 f"Tq = {Tq} queries, Tk = {Tk} keys, H = {H} heads, got {mask.shape}")
            add = np.where(mask, -np.inf, 0.0).astype(dtype) if mask.dtype == np.bool_ else mask.astype(dtype)
            if add.ndim == 3:
                add = add.reshape(B, H, Tq, Tk)  # torch's (B * H, Tq, Tk): row b * H + h is sequence b, head h
            if name == "key_padding_mask":
                add = add[:, None, None, :]  # (B, 1, 1, Tk): key j of sequence b, for every head and query
            M = add if M is None else M + add
        if self.causal:
            future = np.triu(np.ones((Tq, Tk), dtype=bool), k=1)  # (Tq, Tk), True where j > i
            add = np.where(future, -np.inf, 0.0).astype(dtype)
            M = add if M is None else M + add
        return M

    def check_masks(self, key_padding_mask: ArrayLike | None, attn_mask: ArrayLike | None, B: int, Tq: int,
                    Tk: int) -> None:
        """Raise what ``forward`` would raise for these masks with B sequences, Tq queries and Tk
        keys, and nothing else: lets a block check its attention's masks before any of its
        sub-layers runs."""
        self._additive_mask(key_padding_mask, attn_mask, B, Tq, Tk, np.float64)

    def _attend(self, query: np.ndarray, key: np.ndarray, value: np.ndarray, key_padding_mask: ArrayLike | None,
                attn_mask: ArrayLike | None) -> np.ndarray:
        """The forward of ``MultiheadAttention``'s docstring on checked inputs (B, Tq, E),
        (B, Tk, kdim), (B, Tk, vdim); checks the masks before any state changes."""
        who = type(self).__name__
        if not (query.dtype == key.dtype == value.dtype):
            raise TypeError(f"{who} expects query, key and value of one dtype, got {query.dtype}, {key.dtype}, "
                            f"{value.dtype}")
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            raise ValueError(f"{who} expects query (B, Tq, E), key (B, Tk, kdim) and value (B, Tk, vdim) with "
                             f"one B and one Tk, got {query.shape}, {key.shape}, {value.shape}")
        (B, Tq, _), Tk = query.shape, key.shape[1]
        ct = compute_dtype(query.dtype)  # float16 is computed in float32
        M = self._additive_mask(key_padding_mask, attn_mask, B, Tq, Tk, ct)  # checked before any state changes
        extra = int(self.add_bias_kv) + int(self.add_zero_attn)  # keys appended to every sequence
        if M is not None and extra:
            M = np.pad(M, [(0, 0)] * (M.ndim - 1) + [(0, extra)])  # (.., Tq, Tk'), the added keys never masked
        per_head = self.qk_norm_scope == "head"
        q = self.q(query.astype(ct, copy=False))  # (B, Tq, E)
        if self.q_norm is not None and not per_head:
            q = self.q_norm(q)  # (B, Tq, E), each query normalised over all E channels (every head at once)
        q = self._split_heads(q)  # (B, H, Tq, D)
        if self.q_norm is not None and per_head:
            q = self.q_norm(q)  # (B, H, Tq, D), each head's query normalised over its D channels
        k = self.k(key.astype(ct, copy=False))  # (B, Tk, E)
        v = self.v(value.astype(ct, copy=False))  # (B, Tk, E)
        if self.bias_k is not None and self.bias_v is not None:
            k = np.concatenate([k, np.broadcast_to(self.bias_k.data.astype(ct), (B, 1, self.embed_dim))], axis=1)
            v = np.concatenate([v, np.broadcast_to(self.bias_v.data.astype(ct), (B, 1, self.embed_dim))], axis=1)
        if self.k_norm is not None and not per_head:
            k = self.k_norm(k)  # (B, Tk', E), bias_k among them, over all E channels
        k, v = self._split_heads(k), self._split_heads(v)  # (B, H, Tk', D) each
        if self.k_norm is not None and per_head:
            k = self.k_norm(k)  # (B, H, Tk', D), bias_k among them; the zero key comes after, stays 0
        if self.add_zero_attn:
            zero = np.zeros((B, self.num_heads, 1, self.head_dim), dtype=ct)  # (B, H, 1, D)
            k, v = np.concatenate([k, zero], axis=2), np.concatenate([v, zero], axis=2)  # (B, H, Tk', D)
        S = q @ k.swapaxes(-1, -2) / math.sqrt(self.head_dim)  # (B, H, Tq, Tk')
        slope = None
        if self.attn_softcap is not None:
            S, slope = softcap(S, self.attn_softcap)  # (B, H, Tq, Tk') each: c * tanh(S / c) and its slope
        if M is not None:
            S = S + M  # (B, H, Tq, Tk'); -inf where masked out
        with np.errstate(invalid="ignore"):  # a fully masked row: -inf - (-inf) = NaN, as in PyTorch
            P = softmax(S, axis=-1)  # (B, H, Tq, Tk')
        A = P @ v  # (B, H, Tq, D)
        self._cache = (q, k, v, P, query.dtype, slope)
        return self.o(self._merge_heads(A)).astype(query.dtype, copy=False)  # (B, Tq, E)

    def _attend_backward(self, dy: ArrayLike, dP_weights: np.ndarray | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The backward of ``MultiheadAttention``'s docstring: (dquery, dkey, dvalue).
        ``dP_weights`` (B, H, Tq, Tk'), when given, is the gradient that reaches P through the
        attention weights the forward returned."""
        q, k, v, P, in_dtype, slope = self._cached()
        B, H, Tq, D = q.shape
        dy = check_upstream(dy, (B, Tq, self.embed_dim), type(self).__name__).astype(q.dtype)
        dA = self._split_heads(self.o.backward(dy))  # (B, H, Tq, D)
        dP = dA @ v.swapaxes(-1, -2)  # (B, H, Tq, Tk')
        if dP_weights is not None:
            dP = dP + dP_weights  # (B, H, Tq, Tk'): P also left the layer as the weights
        dv = P.swapaxes(-1, -2) @ dA  # (B, H, Tk', D)
        dS = softmax_backward(dP, P, axis=-1)  # (B, H, Tq, Tk'), 0 where masked
        if slope is not None:
            dS = softcap_backward(dS, slope)  # (B, H, Tq, Tk'), through c * tanh(S / c)
        dq = dS @ k / math.sqrt(D)  # (B, H, Tq, D)
        dk = dS.swapaxes(-1, -2) @ q / math.sqrt(D)  # (B, H, Tk', D)
        if self.add_zero_attn:
            dk, dv = dk[:, :, :-1], dv[:, :, :-1]  # (B, H, Tk', D); the zero key and value are constants
        per_head = self.qk_norm_scope == "head"
        if self.q_norm is not None and self.k_norm is not None and per_head:
            dq = self.q_norm.backward(dq)  # (B, H, Tq, D), dq_raw: also dgamma_q (and dbeta_q)
            dk = self.k_norm.backward(dk)  # (B, H, Tk', D), dk_raw: also dgamma_k (and dbeta_k)
        dq, dk, dv = self._merge_heads(dq), self._merge_heads(dk), self._merge_heads(dv)  # (B, Tq or Tk', E)
        if self.q_norm is not None and self.k_norm is not None and not per_head:
            dq = self.q_norm.backward(dq)  # (B, Tq, E), through the norm over all E channels
            dk = self.k_norm.backward(dk)  # (B, Tk', E)
        if self.bias_k is not None and self.bias_v is not None:
            self.bias_k.grad += dk[:, -1:].sum(axis=0, keepdims=True)  # (1, 1, E), summed over the batch
            self.bias_v.grad += dv[:, -1:].sum(axis=0, keepdims=True)  # (1, 1, E)
            dk, dv = dk[:, :-1], dv[:, :-1]  # (B, Tk, E)
        dquery = self.q.backward(dq)  # (B, Tq, E)
        dkey = self.k.backward(dk)  # (B, Tk, kdim)
        dvalue = self.v.backward(dv)  # (B, Tk, vdim)
        return (dquery.astype(in_dtype, copy=False), dkey.astype(in_dtype, copy=False),
                dvalue.astype(in_dtype, copy=False))


class MultiheadAttention(_Attention):
    r"""Multi-head attention: each query mixes the values of the keys it may attend to.

    Shapes: B batch, Tq queries, Tk keys and values, E = ``embed_dim`` channels, H =
    ``num_heads`` heads, D = E / H channels per head. ``forward(query, key, value,
    key_padding_mask=None, attn_mask=None)`` takes query (B, Tq, E), key (B, Tk, kdim) and value
    (B, Tk, vdim) (``kdim`` and ``vdim`` default to E) and returns (B, Tq, E). **normcore's
    default layout is batch first** (``batch_first=True``); torch's default is the opposite,
    ``torch.nn.MultiheadAttention(batch_first=False)`` takes (Tq, B, E). Build the layer with
    ``batch_first=False`` for that layout (inputs, output and gradients then (T, B, .)), and
    either accepts an unbatched query (Tq, E) with key (Tk, kdim) and value (Tk, vdim), its
    key_padding_mask (Tk,) and attn_mask (Tq, Tk) or (H, Tq, Tk), as torch does. The options
    torch's forward has are described below the backward. Queries may come from one sequence and
    keys and values from another of a different length (cross-attention, as in a decoder
    attending to an encoder's output). Four projections: ``q`` Linear(E, E), ``k``
    Linear(kdim, E), ``v`` Linear(vdim, E), ``o`` Linear(E, E); ``bias`` governs the biases of
    q, v and o, and k's only with ``add_bias_kv``, ``add_zero_attn`` or ``qk_norm`` (see below).

    The masks follow ``torch.nn.MultiheadAttention``'s convention, one convention for both:

    - a **boolean** mask is True where attending is **not allowed** (True = masked out);
      (``F.scaled_dot_product_attention`` uses the opposite: True = take part. Not here.)
    - a **floating** mask is **added** to the scores (0 = allowed, -inf = masked out, any
      other value biases the score).

    ``key_padding_mask`` has shape (B, Tk): entry [b, j] masks key j for every query of
    sequence b (padding tokens). ``attn_mask`` has shape (Tq, Tk), the same for every sequence
    and head, or torch's (B * H, Tq, Tk) (row b * H + h for sequence b, head h), or (B, H, Tq,
    Tk); entry [i, j] concerns query i and key j. A floating mask of another dtype than the
    query is cast to the computation's dtype (torch refuses it). ``causal=True`` adds
    the causal mask (key j > query i masked out). All of them combine by addition into one
    additive mask M (a boolean True becomes -inf, a False 0)::

        M[b, h, i, j] = kpm[b, j] + attn_mask[(b, h,) i, j] + (-inf if causal and j > i else 0)

    Forward::

        q = query Wq^T + bq                                     (B, Tq, E)
        k = key Wk^T (+ bk),  v = value Wv^T + bv               (B, Tk, E) each
        k, v = [k; bias_k], [v; bias_v]    if add_bias_kv       (B, Tk+1, E): one more key and value
        q, k, v = split_heads(q), split_heads(k), split_heads(v)  (B, H, Tq, D), (B, H, Tk', D)
        q, k = q_norm(q), k_norm(k)        if qk_norm           (B, H, Tq, D), (B, H, Tk', D): each head's
                                                                 rows over their D channels, before 1/sqrt(D)
        k, v = [k; 0], [v; 0]              if add_zero_attn     (B, H, Tk'+1, D): a zero key and value
        S = q @ k^T / sqrt(D) + M                               (B, H, Tq, Tk')  S[b, h, i, j]: query i, key j
        P = softmax(S, axis=-1)                                 (B, H, Tq, Tk')  each row sums to 1
        A = P @ v                                               (B, H, Tq, D)
        y = merge_heads(A) Wo^T + bo                            (B, Tq, E)

    split_heads reshapes (B, T, E) to (B, T, H, D) and swaps to (B, H, T, D); merge_heads undoes
    it. Tk' counts the appended keys; M gets a column of zeros for each (they are never masked).

    Backward, the forward read bottom to top (d<name> = dL/d<name>, the shape of <name>)::

        dA = split_heads(o.backward(dy))                        (B, H, Tq, D)    also dWo, dbo
        dP = dA @ v^T                                           (B, H, Tq, Tk')  from A = P @ v
        dv = P^T @ dA                                           (B, H, Tk', D)   from A = P @ v
        dS = P * (dP - sum_j(dP * P))                           (B, H, Tq, Tk')  softmax backward
        dq = dS @ k / sqrt(D)                                   (B, H, Tq, D)    from S = q @ k^T / sqrt(D) + M
        dk = dS^T @ q / sqrt(D)                                 (B, H, Tk', D)   from S = q @ k^T / sqrt(D) + M
        dk, dv = dk[:, :, :-1], dv[:, :, :-1]  if add_zero_attn (the zero key and value are constants)
        dq = q_norm.backward(dq)                                (B, H, Tq, D)    if qk_norm: dq_raw; also
        dk = k_norm.backward(dk)                                (B, H, Tk', D)   dgamma (dbeta) of each norm
        dk, dv = merge_heads(dk), merge_heads(dv)               (B, Tk', E) each
        dbias_k = sum_b dk[b, -1], dbias_v = sum_b dv[b, -1]    (1, 1, E)        if add_bias_kv; then drop
                                                                                 that last position
        dquery = q.backward(merge_heads(dq))                    (B, Tq, E)       also dWq, dbq
        dkey = k.backward(dk),  dvalue = v.backward(dv)         (B, Tk, kdim), (B, Tk, vdim)

    The options of torch's forward, keyword arguments here:

    - ``need_weights``: left out (None), ``forward`` returns the output alone, as normcore's
      blocks call it; ``True`` returns torch's pair (output, weights) and ``False`` the pair
      (output, None), as ``torch.nn.MultiheadAttention`` does (its default is True). The weights
      are P, averaged over the heads, (B, Tq, Tk'), with ``average_attn_weights=True`` (torch's
      default), or per head, (B, H, Tq, Tk'); batch first whatever ``batch_first`` says, as in
      torch, and without B for an unbatched query; Tk' counts the added keys, as torch's do.
      (torch's ``need_weights=False`` runs its fused path, which differs from this arithmetic,
      beyond rounding, only on a fully masked row; see below.)
    - ``backward(dy, dweights=None)``: when the forward returned the weights, their upstream
      gradient may be given too; it joins dP, the averaged weights' as dweights / H to every
      head: ``dP = dA @ v^T + dweights``. Without it the weights are taken as unused.
    - ``is_causal=True`` is torch's hint that ``attn_mask`` is the causal mask. As in torch it
      needs that mask; normcore applies the mask as given and refuses one that is not exactly
      the causal mask (True or -inf where key j > query i, False or 0 elsewhere), and refuses
      the hint with ``add_bias_kv`` or ``add_zero_attn``: in both cases torch's fused path (its
      own causal mask in place of the given one) and its other path give different outputs
      (measured on torch 2.13). For a causal layer without a mask, build it with ``causal=True``;
      such a layer takes the hint without a mask too (its causal mask is the one described).

    ``backward(dy)`` returns the tuple (dquery, dkey, dvalue). M is a constant added to S, so
    dS passes through it unchanged and the masks need no backward of their own (they get no
    gradient): where M = -inf, P = 0, so dS = P * (...) is 0 there and no gradient reaches a
    masked key (a future key, a padding token).

    A row whose every key is masked out (S[b, h, i, :] all -inf) has no softmax: the row
    maximum is -inf, S - max is -inf - (-inf) = NaN, and P, A and the output y[b, i] are NaN.
    This is what ``torch.nn.MultiheadAttention`` computes on its explicit math path
    (``need_weights=True``, and the fused fast path in eval/no_grad; measured on torch 2.13).
    The backward then carries that NaN on exactly as PyTorch's autograd does: the NaN row of P
    reaches every dv (dv = P^T @ dA), hence dkey, dvalue and the parameter gradients.
    (PyTorch's ``need_weights=False`` path goes through ``F.scaled_dot_product_attention``,
    which in 2.13 gives A = 0 for such a row instead; normcore does not copy that.) Don't mask
    a whole row; give a padded query at least one key and ignore its output. With
    ``add_bias_kv`` or ``add_zero_attn`` no row is ever fully masked: the added keys are not.

    When a key bias matters. A bias bk adds q_i . bk to every score of row i: the same
    constant for every projected key j (and M is added after it, so masking changes nothing),
    and softmax ignores a constant added to a whole row. So without added keys bk's gradient
    is exactly zero and it would never move from its initial value; ``k`` then has no bias
    (PyTorch's ``in_proj_bias[E:2E]`` is dropped). But ``bias_k`` and the zero key are appended
    *after* the projection and do not get bk: their scores q_i . bias_k and 0 do not shift with
    the others, so bk changes the softmax and has a gradient. With ``qk_norm`` the bias is added
    *before* the norm: k_j = norm(key_j Wk^T + bk) is no longer k_j + a constant, the score
    q_i . k_j changes with bk differently for every key j, and bk has a gradient (a gradient
    check measures it, to 1e-9 against central differences, where without qk_norm it is exactly
    0). Hence ``k`` has a bias exactly when ``bias and (add_bias_kv or add_zero_attn or
    qk_norm)``; without qk_norm it maps to ``in_proj_bias[E:2E]``. The same argument, one step
    later, removes the bias of a LayerNorm ``k_norm``: beta_k is added *after* the norm, to every
    key of the head (bias_k included), so q_i . beta_k is again a per-row constant and its
    gradient exactly 0; only the zero key, appended after the norm, escapes it. So ``k_norm`` has
    a bias only when ``bias and add_zero_attn``, while ``q_norm``'s (beta_q . k_j, different for
    every key) is there with ``bias``.

    ``qk_norm`` ("rmsnorm" or "layernorm"; QK-norm: Henry et al. 2020, with an L2 norm and a
    learned scale; Dehghani et al. 2023, ViT-22B, with a bias-free LayerNorm; Wortsman et al.
    2023; per head as in Gemma 3 and Qwen3, where OLMo 2 normalises the whole q and k projections
    before the split into heads): children ``q_norm`` and ``k_norm``, normcore's
    ``RMSNorm(D)`` or ``LayerNorm(D)`` with their default eps (machine epsilon for RMSNorm, as
    torch's eps=None; 1e-5 for LayerNorm), one weight gamma of shape (D,) each, shared by all
    heads, applied to each head's queries and keys after split_heads and before the 1/sqrt(D)
    scaling. Why: without it a logit q . k / sqrt(D) grows with Wq and Wk, and at high learning
    rates the logits grow without bound until softmax is one-hot (attention entropy collapse)
    and training diverges. With RMSNorm each head's standardised q and k row has RMS at most 1
    (|q_hat| <= sqrt(D)), so by Cauchy-Schwarz |q . k| / sqrt(D) <= max|gamma_q| max|gamma_k|
    |q_hat| |k_hat| / sqrt(D) <= max|gamma_q| max|gamma_k| sqrt(D): the logits are bounded by the
    two weight vectors alone, whatever Wq, Wk and the input do; likewise with a LayerNorm without
    bias (|x_hat| <= sqrt(D)). The learned gains can grow, and the bound with them. With
    "layernorm" q_norm keeps its bias beta_q, which adds beta_q . k / sqrt(D) to each logit, up
    to |beta_q * gamma_k| more (and, with a k_norm bias, |gamma_q * beta_k| + |beta_q . beta_k| /
    sqrt(D)); ``normcore.experiments.qk_norm.logit_bound`` computes the full bound. In the
    backward the norm's backward stands between dq (dk) and the merge: dq_raw =
    q_norm.backward(dq), then merged and through the q projection.

    ``qk_norm_scope`` says over which channels q and k are normalised, two published variants:

    - ``"head"`` (the default, described above): each head's q and k over its D channels, one
      weight (D,) shared by the heads, after split_heads. Gemma 3 and Qwen3 do this (their
      published code in Hugging Face transformers: ``q_norm`` and ``k_norm`` are RMSNorms of
      size head_dim, applied after the reshape into heads). Every head's logits are bounded by
      the weights alone, as above: |S| <= max|gamma_q| max|gamma_k| sqrt(D).
    - ``"projection"``: the whole projection q = query Wq^T + bq (B, Tq, E) and k (B, Tk', E)
      over all E channels, *before* split_heads, one weight (E,) each (state dict
      ``q_norm.weight`` and ``k_norm.weight`` of shape (E,), as a torch user would build
      ``RMSNorm(E)``). OLMo 2 does this (the OLMo 2 report, arXiv 2501.00656; its published
      ``Olmo2Attention`` builds ``q_norm`` of size num_heads * head_dim and applies it to the
      q projection before the reshape into heads). It bounds the whole query: with RMSNorm
      |q_hat| <= sqrt(E) over all heads together, so one head's logit is bounded by
      max|gamma_q| max|gamma_k| E / sqrt(D) = H sqrt(D) max|gamma_q| max|gamma_k|, H times the
      per-head bound, reached only when a query's whole norm sits in one head. The backward
      puts the norms' backward after the merge: dq_raw = q_norm.backward(merge(dq)).

    ``attn_softcap`` (None: none; a number c > 0) caps the scores smoothly before the mask and
    the softmax, S = c * tanh(S / c) (``SoftCap``), as Gemma 2 does (the Gemma 2 report,
    arXiv 2408.00118: c = 50 for its attention; in Hugging Face transformers' Gemma 2 code the
    cap is applied to the scaled scores, then the mask is added, then the softmax). Backward:
    dS_raw = dS * (1 - tanh(S_raw / c)**2), between the softmax's backward and dq, dk.

    ``add_bias_kv``: learned ``bias_k`` and ``bias_v`` of shape (1, 1, E), drawn as PyTorch
    does (normal, std sqrt(1 / E)). ``add_zero_attn``: a zero key and value appended per head,
    after ``bias_k``/``bias_v`` (PyTorch's order). ``value_gain`` scales the initialisation of
    the value and output projections (DeepNorm's beta); ``init`` is the ``Linear``
    initialisation. float16 inputs are computed in float32 and cast back. Cache: q, k, v (split,
    normalised with qk_norm, with the added keys; q_norm and k_norm cache their own inputs), P
    (the masks are not kept: P already holds their effect), the inputs' dtype and the soft-cap's
    slope (None without ``attn_softcap``); beside it the caller's layout and which weights the
    forward returned.
    """

    def __init__(self, embed_dim: int, num_heads: int, bias: bool = True, add_bias_kv: bool = False,
                 add_zero_attn: bool = False, kdim: int | None = None, vdim: int | None = None,
                 causal: bool = False, init: str = "xavier", value_gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64, qk_norm: str | None = None, batch_first: bool = True,
                 qk_norm_scope: str = "head", attn_softcap: float | None = None) -> None:
        super().__init__(embed_dim, num_heads, bias, add_bias_kv, add_zero_attn, kdim, vdim, causal, init,
                         value_gain, rng, dtype, qk_norm, qk_norm_scope, attn_softcap)
        self.batch_first = flag(batch_first, "batch_first", type(self).__name__)

    def extra_repr(self) -> str:
        return super().extra_repr() + ("" if self.batch_first else ", batch_first=False")

    def forward(self, query: ArrayLike, key: ArrayLike, value: ArrayLike, key_padding_mask: ArrayLike | None = None,
                attn_mask: ArrayLike | None = None, *, need_weights: bool | None = None,
                average_attn_weights: bool = True,
                is_causal: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray | None]:
        who = type(self).__name__
        need_weights = None if need_weights is None else flag(need_weights, "need_weights", who)
        average = flag(average_attn_weights, "average_attn_weights", who)
        is_causal = flag(is_causal, "is_causal", who)
        q_in, k_in, v_in, key_padding_mask, attn_mask, layout = self._working_layout(
            query, key, value, key_padding_mask, attn_mask)  # (B, Tq, E), (B, Tk, kdim), (B, Tk, vdim)
        if is_causal:
            self._check_causal_hint(q_in.shape[0], q_in.shape[1], k_in.shape[1], key_padding_mask, attn_mask)
        y = self._attend(q_in, k_in, v_in, key_padding_mask, attn_mask)  # (B, Tq, E)
        self._returned = (layout, None if not need_weights else "average" if average else "heads")
        y = self._user_layout(y, layout)
        if need_weights is None:
            return y  # normcore's own call: the output alone
        if not need_weights:
            return y, None  # torch's pair
        P, in_dtype = self._cache[3], self._cache[4]  # (B, H, Tq, Tk')
        weights = (P.mean(axis=1) if average else P.copy()).astype(in_dtype, copy=False)  # (B, [H,] Tq, Tk')
        return y, (weights[0] if layout == "unbatched" else weights)

    def backward(self, dy: ArrayLike, dweights: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        who = type(self).__name__
        q, k, _v, _P, _dtype, _slope = self._cached()
        layout, returned = self._returned
        (B, H, Tq, _), Tk = q.shape, k.shape[2]  # Tk counts the added keys, as the weights do
        out = {"unbatched": (Tq, self.embed_dim), "batch_first": (B, Tq, self.embed_dim),
               "sequence_first": (Tq, B, self.embed_dim)}[layout]
        dy = self._working(check_upstream(dy, out, who), layout)  # (B, Tq, E)
        dP = None
        if dweights is not None:
            if returned is None:
                raise ValueError(f"{who}.backward got dweights, but the last forward returned no attention "
                                 f"weights (forward(..., need_weights=True) returns them)")
            shape: tuple[int, ...] = (B, Tq, Tk) if returned == "average" else (B, H, Tq, Tk)
            shape = shape[1:] if layout == "unbatched" else shape
            dw = as_array(dweights, f"{who}.backward", "dweights")
            if dw.shape != shape:
                raise ValueError(f"{who}.backward expects dweights of the weights' shape {shape}, got {dw.shape}")
            if not np.issubdtype(dw.dtype, np.floating):
                raise TypeError(f"{who}.backward expects floating-point dweights, got dtype {dw.dtype}")
            dw = dw[None] if layout == "unbatched" else dw  # (B, [H,] Tq, Tk')
            dP = (dw[:, None] / H if returned == "average" else dw).astype(q.dtype)  # (B, H or 1, Tq, Tk')
        grads = self._attend_backward(dy, dP)  # (dquery, dkey, dvalue), batch first
        dquery, dkey, dvalue = (self._user_layout(g, layout) for g in grads)
        return dquery, dkey, dvalue

    # --- the options torch users pass: layouts and the causal hint ---------------------------

    def _working_layout(self, query: ArrayLike, key: ArrayLike, value: ArrayLike,
                        key_padding_mask: ArrayLike | None, attn_mask: ArrayLike | None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, ArrayLike | None, ArrayLike | None, str]:
        """The inputs checked and in the layout the arithmetic uses, (B, T, E), and the caller's
        layout: "unbatched" ((T, E) inputs gain a batch axis of 1, a key_padding_mask (Tk,)
        too; an attn_mask (H, Tq, Tk) is already torch's (B * H, Tq, Tk)), "batch_first"
        (as they are) or "sequence_first" ((T, B, E), transposed: ``batch_first=False``)."""
        who, E = type(self).__name__, self.embed_dim
        arrays = [float_input(x, who, name) for x, name in ((query, "query"), (key, "key"), (value, "value"))]
        unbatched = arrays[0].ndim == 2
        layout = "unbatched" if unbatched else "batch_first" if self.batch_first else "sequence_first"
        for x, name, width, length in zip(arrays, ("query", "key", "value"), (E, self.kdim, self.vdim),
                                          ("Tq", "Tk", "Tk")):
            if x.ndim != (2 if unbatched else 3) or x.shape[-1] != width:
                raise ValueError(f"{who} expects {name} of shape {self._shape_text(length, width, unbatched)}"
                                 f"{self._layout_text(unbatched)}, got {x.shape}")
        query, key, value = (self._working(x, layout) for x in arrays)
        if key.shape[:2] != value.shape[:2] or query.shape[0] != key.shape[0]:
            shapes = ", ".join(self._shape_text(n, w, unbatched) for n, w in (("Tq", E), ("Tk", self.kdim),
                                                                               ("Tk", self.vdim)))
            raise ValueError(f"{who} expects query, key and value of shapes {shapes} with one B and one Tk, "
                             f"got {', '.join(str(x.shape) for x in arrays)}")
        if unbatched:
            key_padding_mask, attn_mask = self._unbatched_masks(key_padding_mask, attn_mask, query.shape[1],
                                                                key.shape[1])
        return query, key, value, key_padding_mask, attn_mask, layout

    def _shape_text(self, length: str, width: int, unbatched: bool) -> str:
        """How an input of ``length`` positions and ``width`` channels is laid out, as text."""
        if unbatched:
            return f"({length}, {width})"
        return f"(B, {length}, {width})" if self.batch_first else f"({length}, B, {width})"

    def _layout_text(self, unbatched: bool) -> str:
        return " (all three unbatched, as the query)" if unbatched else f" (batch_first={self.batch_first})"

    def _working(self, x: np.ndarray, layout: str) -> np.ndarray:
        """An input or upstream gradient in the caller's layout -> (B, T, E)."""
        return x[None] if layout == "unbatched" else x if layout == "batch_first" else x.swapaxes(0, 1)

    @staticmethod
    def _user_layout(x: np.ndarray, layout: str) -> np.ndarray:
        """An output or gradient (B, T, E) -> the caller's layout."""
        if layout == "unbatched":
            return x[0]
        return x if layout == "batch_first" else np.ascontiguousarray(x.swapaxes(0, 1))

    def _unbatched_masks(self, key_padding_mask: ArrayLike | None, attn_mask: ArrayLike | None, Tq: int,
                         Tk: int) -> tuple[np.ndarray | None, np.ndarray | None]:
        """An unbatched query's masks, checked, with a batch axis of 1 where they need one:
        key_padding_mask (Tk,) -> (1, Tk); attn_mask (Tq, Tk) or (H, Tq, Tk) as it is."""
        who, H = type(self).__name__, self.num_heads
        if key_padding_mask is not None:
            key_padding_mask = as_array(key_padding_mask, who, "key_padding_mask")
            if key_padding_mask.shape != (Tk,):
                raise ValueError(f"{who}: with an unbatched query, key_padding_mask must have shape (Tk,) = "
                                 f"({Tk},), got {key_padding_mask.shape}")
            key_padding_mask = key_padding_mask[None]  # (1, Tk)
        if attn_mask is not None:
            attn_mask = as_array(attn_mask, who, "attn_mask")
            if attn_mask.shape not in ((Tq, Tk), (H, Tq, Tk)):
                raise ValueError(f"{who}: with an unbatched query, attn_mask must have shape (Tq, Tk) = "
                                 f"{(Tq, Tk)} or (H, Tq, Tk) = {(H, Tq, Tk)}, got {attn_mask.shape}")
        return key_padding_mask, attn_mask

    def _check_causal_hint(self, B: int, Tq: int, Tk: int, key_padding_mask: ArrayLike | None,
                           attn_mask: ArrayLike | None) -> None:
        """``is_causal=True`` is torch's hint that ``attn_mask`` is the causal mask: torch
        requires the mask, and on its fused path uses the causal mask in its place. normcore
        takes the hint without a mask on a ``causal=True`` layer (its own mask is that mask),
        applies a given mask as it is and refuses one that is not exactly causal (key j > query i
        masked out, True or -inf; nothing else masked or biased), and the hint with added keys
        (``add_bias_kv``, ``add_zero_attn``): there torch's paths disagree."""
        who = type(self).__name__
        if attn_mask is None:
            if self.causal:
                return  # the layer's own causal mask is the mask the hint describes
            raise ValueError(f"{who}: is_causal=True is a hint that attn_mask is the causal mask and needs "
                             f"that mask, as in torch: pass attn_mask=np.triu(np.ones((Tq, Tk), bool), 1), "
                             f"or build the layer with causal=True")
        if self.add_bias_kv or self.add_zero_attn:
            raise ValueError(f"{who}: is_causal=True with add_bias_kv or add_zero_attn: torch's fused path then "
                             f"masks the added keys too and its other path does not; pass is_causal=False "
                             f"(the causal attn_mask applies as it is, the added keys open to every query)")
        self.check_masks(key_padding_mask, attn_mask, B, Tq, Tk)  # a mask of the wrong shape or dtype says so
        mask = as_array(attn_mask, who, "attn_mask")
        future = np.triu(np.ones((Tq, Tk), dtype=bool), k=1)  # (Tq, Tk), True where j > i
        if mask.dtype == np.bool_:
            causal = bool(np.all(mask == future))
        else:
            causal = bool(np.all(np.where(future, np.isneginf(mask), mask == 0)))
        if not causal:
            raise ValueError(f"{who}: is_causal=True says attn_mask is the causal mask (True or -inf exactly "
                             f"where key j > query i, False or 0 elsewhere), but this attn_mask is not; "
                             f"torch's code paths disagree on such a call. Pass is_causal=False to apply "
                             f"the mask as it is")


class MultiheadSelfAttention(_Attention):
    r"""Multi-head self-attention: ``MultiheadAttention`` with query = key = value = x.

    Shapes: B batch, T positions, C = d_model channels, H = n_heads heads, D = C / H.
    ``forward(x, key_padding_mask=None, attn_mask=None)`` with x (B, T, C), key_padding_mask
    (B, T), attn_mask (T, T), torch's (B * H, T, T) or (B, H, T, T), in ``MultiheadAttention``'s
    convention (a boolean True = masked out, a floating mask added); returns (B, T, C). Batch
    first only (``MultiheadAttention`` has torch's other layouts and options). ``causal=True`` masks key
    j > query i. The forward, the masks and the backward are ``MultiheadAttention``'s (see its
    docstring for the derivation) with Tq = Tk = T::

        y = MultiheadAttention.forward(x, x, x, key_padding_mask, attn_mask)     (B, T, C)
        dquery, dkey, dvalue = MultiheadAttention.backward(dy)                   (B, T, C) each
        dx = dquery + dkey + dvalue                                              (B, T, C)

    x feeds three projections, so its gradient is the sum of three terms. Children q, k, v, o,
    each a ``Linear(C, C)``; ``bias`` governs the biases of q, v and o; without ``qk_norm`` the
    key projection has none: a key bias adds q_i . bk to every score of row i, a constant softmax
    ignores (``MultiheadAttention``'s docstring says why, and when that fails). State dict:
    q.weight, q.bias, k.weight, v.weight, v.bias, o.weight, o.bias. ``qk_norm="rmsnorm"`` or
    ``"layernorm"`` normalises each head's q and k over its D channels before 1/sqrt(D) (see
    ``MultiheadAttention``): children ``q_norm``, ``k_norm``; the key bias then matters, so
    ``k.bias`` is there with ``bias``, and the state dict adds q_norm.weight (and q_norm.bias
    for layernorm) and k_norm.weight, of shape (D,); ``qk_norm_scope="projection"``
    normalises q and k over all C channels before the heads are split instead (OLMo 2), with
    weights of shape (C,). ``attn_softcap=c`` caps the scores at c * tanh(S / c) before the
    mask and the softmax (Gemma 2); ``MultiheadAttention``'s docstring has both. A PyTorch ``in_proj_bias`` maps to
    ``q.bias`` = [0:C] and ``v.bias`` = [2C:3C]; [C:2C] is dropped (its gradient is zero).
    ``value_gain`` scales the value and output projections' initialisation (DeepNorm's beta).
    """

    def __init__(self, d_model: int, n_heads: int, causal: bool = False, bias: bool = True,
                 init: str = "xavier", value_gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64, qk_norm: str | None = None, qk_norm_scope: str = "head",
                 attn_softcap: float | None = None) -> None:
        who = type(self).__name__
        d_model = positive_int(d_model, "d_model", who)
        n_heads = positive_int(n_heads, "n_heads", who)
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        super().__init__(d_model, n_heads, bias=bias, causal=causal, init=init, value_gain=value_gain, rng=rng,
                         dtype=dtype, qk_norm=qk_norm, qk_norm_scope=qk_norm_scope, attn_softcap=attn_softcap)
        self.d_model, self.n_heads = d_model, n_heads

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, causal={self.causal}{self._options_repr()}"

    def forward(self, x: ArrayLike, key_padding_mask: ArrayLike | None = None,
                attn_mask: ArrayLike | None = None) -> np.ndarray:
        who = type(self).__name__
        x = float_input(x, who)
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"{who} expects input of shape (B, T, {self.d_model}), got {x.shape}")
        return self._attend(x, x, x, key_padding_mask, attn_mask)  # (B, T, C)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        dquery, dkey, dvalue = self._attend_backward(dy)  # (B, T, C) each
        return dquery + dkey + dvalue  # (B, T, C): x was the query, the key and the value


class CausalSelfAttention(MultiheadSelfAttention):
    r"""Causal multi-head self-attention: ``MultiheadSelfAttention`` with ``causal=True``.

    Each position mixes the values of itself and earlier positions: key j > query i is masked
    out. The forward, backward, state dict (q, k, v, o; no key bias) and the optional
    ``key_padding_mask`` / ``attn_mask`` are those of ``MultiheadSelfAttention``, whose
    docstring has the derivation.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, init: str = "xavier",
                 value_gain: float = 1.0, rng: RngLike = None, dtype: DTypeLike = np.float64,
                 qk_norm: str | None = None, qk_norm_scope: str = "head", attn_softcap: float | None = None) -> None:
        super().__init__(d_model, n_heads, True, bias, init, value_gain, rng, dtype, qk_norm, qk_norm_scope,
                         attn_softcap)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}{self._options_repr()}"
