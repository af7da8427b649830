"""Multi-head self-attention, causal or not, with key padding and attention masks, and its
backward pass written out step by step."""

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import RngLike, as_array, check_upstream, float_input, make_rng, positive_int
from ..module import Module
from .activations import softmax, softmax_backward
from .linear import Linear


class MultiheadSelfAttention(Module):
    r"""Multi-head self-attention: each position mixes the values of the positions it may attend to.

    Shapes: B batch, T positions, C = d_model channels, H = n_heads heads, D = C / H channels
    per head. Four projections ``q``, ``k``, ``v``, ``o``, each a ``Linear(C, C)``; ``bias``
    governs the biases of ``q``, ``v`` and ``o``; the key projection never has one (see below).

    ``forward(x, key_padding_mask=None, attn_mask=None)``. The masks follow
    ``torch.nn.MultiheadAttention``'s convention, one convention for both:

    - a **boolean** mask is True where attending is **not allowed** (True = masked out);
      (``F.scaled_dot_product_attention`` uses the opposite: True = take part. Not here.)
    - a **floating** mask is **added** to the scores (0 = allowed, -inf = masked out, any
      other value biases the score).

    ``key_padding_mask`` has shape (B, T): entry [b, j] masks key j for every query of
    sequence b (padding tokens). ``attn_mask`` has shape (T, T), the same for every sequence
    and head, or (B, H, T, T); entry [i, j] concerns query i and key j. ``causal=True`` adds
    the causal mask (key j > query i masked out). All of them combine by addition into one
    additive mask M (a boolean True becomes -inf, a False 0)::

        M[b, h, i, j] = kpm[b, j] + attn_mask[(b, h,) i, j] + (-inf if causal and j > i else 0)

    Forward::

        q = x Wq^T + bq,  k = x Wk^T,  v = x Wv^T + bv          (B, T, C) each
        q, k, v = split_heads(q), split_heads(k), split_heads(v)  (B, H, T, D) each
        S = q @ k^T / sqrt(D) + M                               (B, H, T, T)  S[b, h, i, j]: query i, key j
        P = softmax(S, axis=-1)                                 (B, H, T, T)  each row sums to 1
        A = P @ v                                               (B, H, T, D)
        y = merge_heads(A) Wo^T + bo                            (B, T, C)

    split_heads reshapes (B, T, C) to (B, T, H, D) and swaps to (B, H, T, D); merge_heads undoes it.

    Backward, the forward read bottom to top (d<name> = dL/d<name>, the shape of <name>)::

        dA = split_heads(o.backward(dy))                        (B, H, T, D)   also dWo, dbo
        dP = dA @ v^T                                           (B, H, T, T)   from A = P @ v
        dv = P^T @ dA                                           (B, H, T, D)   from A = P @ v
        dS = P * (dP - sum_j(dP * P))                           (B, H, T, T)   softmax backward
        dq = dS @ k / sqrt(D)                                   (B, H, T, D)   from S = q @ k^T / sqrt(D) + M
        dk = dS^T @ q / sqrt(D)                                 (B, H, T, D)   from S = q @ k^T / sqrt(D) + M
        dx = q.backward(merge_heads(dq)) + k.backward(merge_heads(dk)) + v.backward(merge_heads(dv))
                                                                (B, T, C)      also dWq, dbq, ...

    Three things to notice. M is a constant added to S, so dS passes through it unchanged and
    the masks need no backward of their own (they get no gradient): where M = -inf, P = 0, so
    dS = P * (...) is 0 there and no gradient reaches a masked key (a future key, a padding
    token). x feeds three projections, so its gradient is the sum of three terms.

    A row whose every key is masked out (S[b, h, i, :] all -inf) has no softmax: the row
    maximum is -inf, S - max is -inf - (-inf) = NaN, and P, A and the output y[b, i] are NaN.
    This is what ``torch.nn.MultiheadAttention`` computes on its explicit math path
    (``need_weights=True``, and the fused fast path in eval/no_grad; measured on torch 2.13).
    The backward then carries that NaN on exactly as PyTorch's autograd does: the NaN row of P
    reaches every dv (dv = P^T @ dA), hence dx and the parameter gradients, usually everywhere.
    (PyTorch's ``need_weights=False`` path goes through ``F.scaled_dot_product_attention``,
    which in 2.13 gives A = 0 for such a row instead; normcore does not copy that.) Don't mask
    a whole row; give a padded query at least one key, e.g. itself, and ignore its output.

    Why no key bias: a bias bk would add q_i . bk to every score of row i, the same constant
    for every key j (and M is added after it, so masking changes nothing), and softmax ignores
    a constant added to a whole row. Its gradient is exactly zero (PyTorch has one in
    ``in_proj_bias[C:2C]``, and its gradient is zero up to rounding), so it would never move
    from its initial value; ``k`` is therefore ``Linear(C, C, bias=False)``. A PyTorch
    ``in_proj_bias`` maps to ``q.bias`` = [0:C] and ``v.bias`` = [2C:3C]; [C:2C] is dropped.

    ``value_gain`` scales the initialisation of the value and output projections (DeepNorm's
    beta); ``init`` is the ``Linear`` initialisation. Cache: q, k, v (split) and P (the masks
    are not kept: P already holds their effect).
    """

    def __init__(self, d_model: int, n_heads: int, causal: bool = False, bias: bool = True,
                 init: str = "xavier", value_gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64) -> None:
        who = type(self).__name__
        d_model = positive_int(d_model, "d_model", who)
        n_heads = positive_int(n_heads, "n_heads", who)
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        self.causal = bool(causal)
        rng = make_rng(rng)
        self.q = Linear(d_model, d_model, bias, init, 1.0, rng, dtype)
        self.k = Linear(d_model, d_model, False, init, 1.0, rng, dtype)  # no key bias: see the docstring
        self.v = Linear(d_model, d_model, bias, init, value_gain, rng, dtype)
        self.o = Linear(d_model, d_model, bias, init, value_gain, rng, dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}, causal={self.causal}"

    def _split_heads(self, t: np.ndarray) -> np.ndarray:
        """(B, T, C) -> (B, H, T, D)."""
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.head_dim).transpose(0, 2, 1, 3)

    def _merge_heads(self, t: np.ndarray) -> np.ndarray:
        """(B, H, T, D) -> (B, T, C)."""
        B, _, T, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)

    def _additive_mask(self, key_padding_mask: ArrayLike | None, attn_mask: ArrayLike | None, B: int, T: int,
                       dtype: DTypeLike) -> np.ndarray | None:
        """Check the masks and combine them (and the causal mask) into one additive mask M,
        broadcastable to (B, H, T, T), or None when nothing is masked. A new array: the caller's
        masks are read, never kept."""
        who, H = type(self).__name__, self.n_heads
        M = None
        for mask, name, shapes in (
            (key_padding_mask, "key_padding_mask", [(B, T)]),
            (attn_mask, "attn_mask", [(T, T), (B, H, T, T)]),
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
                raise ValueError(f"{who}: {name} must have shape {expected} for input (B, T) = ({B}, {T}), "
                                 f"got {mask.shape}")
            add = np.where(mask, -np.inf, 0.0).astype(dtype) if mask.dtype == np.bool_ else mask.astype(dtype)
            if name == "key_padding_mask":
                add = add[:, None, None, :]  # (B, 1, 1, T): key j of sequence b, for every head and query
            M = add if M is None else M + add
        if self.causal:
            future = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T), True where j > i
            add = np.where(future, -np.inf, 0.0).astype(dtype)
            M = add if M is None else M + add
        return M

    def forward(self, x: ArrayLike, key_padding_mask: ArrayLike | None = None,
                attn_mask: ArrayLike | None = None) -> np.ndarray:
        who = type(self).__name__
        x = float_input(x, who)
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"{who} expects input of shape (B, T, {self.d_model}), got {x.shape}")
        B, T, _ = x.shape
        M = self._additive_mask(key_padding_mask, attn_mask, B, T, x.dtype)  # checked before any state changes
        q = self._split_heads(self.q(x))  # (B, H, T, D)
        k = self._split_heads(self.k(x))  # (B, H, T, D)
        v = self._split_heads(self.v(x))  # (B, H, T, D)
        S = q @ k.swapaxes(-1, -2) / math.sqrt(self.head_dim)  # (B, H, T, T)
        if M is not None:
            S = S + M  # (B, H, T, T); -inf where masked out
        with np.errstate(invalid="ignore"):  # a fully masked row: -inf - (-inf) = NaN, as in PyTorch
            P = softmax(S, axis=-1)  # (B, H, T, T)
        A = P @ v  # (B, H, T, D)
        self._cache = (q, k, v, P)
        return self.o(self._merge_heads(A))  # (B, T, C)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        q, k, v, P = self._cached()
        B, H, T, D = q.shape
        dy = check_upstream(dy, (B, T, self.d_model), type(self).__name__)
        dA = self._split_heads(self.o.backward(dy))  # (B, H, T, D)
        dP = dA @ v.swapaxes(-1, -2)  # (B, H, T, T)
        dv = P.swapaxes(-1, -2) @ dA  # (B, H, T, D)
        dS = softmax_backward(dP, P, axis=-1)  # (B, H, T, T), 0 where masked
        dq = dS @ k / math.sqrt(D)  # (B, H, T, D)
        dk = dS.swapaxes(-1, -2) @ q / math.sqrt(D)  # (B, H, T, D)
        dx = self.q.backward(self._merge_heads(dq))  # (B, T, C)
        dx = dx + self.k.backward(self._merge_heads(dk))  # (B, T, C)
        dx = dx + self.v.backward(self._merge_heads(dv))  # (B, T, C)
        return dx


class CausalSelfAttention(MultiheadSelfAttention):
    r"""Causal multi-head self-attention: ``MultiheadSelfAttention`` with ``causal=True``.

    Each position mixes the values of itself and earlier positions: key j > query i is masked
    out. The forward, backward, state dict (q, k, v, o; no key bias) and the optional
    ``key_padding_mask`` / ``attn_mask`` are those of ``MultiheadSelfAttention``, whose
    docstring has the derivation.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, init: str = "xavier",
                 value_gain: float = 1.0, rng: RngLike = None, dtype: DTypeLike = np.float64) -> None:
        super().__init__(d_model, n_heads, True, bias, init, value_gain, rng, dtype)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}"
