"""Causal multi-head self-attention with its backward pass written out step by step."""

import math

import numpy as np

from .._array import check_upstream, float_input, make_rng, positive_int
from ..module import Module
from .activations import softmax, softmax_backward
from .linear import Linear


class CausalSelfAttention(Module):
    r"""Causal multi-head self-attention: each position mixes the values of itself and earlier positions.

    Shapes: B batch, T positions, C = d_model channels, H = n_heads heads, D = C / H channels
    per head. Four projections ``q``, ``k``, ``v``, ``o``, each a ``Linear(C, C)``; the key
    projection has no bias (see below).

    Forward::

        q = x Wq^T + bq,  k = x Wk^T,  v = x Wv^T + bv          (B, T, C) each
        q, k, v = split_heads(q), split_heads(k), split_heads(v)  (B, H, T, D) each
        S = q @ k^T / sqrt(D)                                   (B, H, T, T)  S[b, h, i, j]: query i, key j
        S[..., i, j] = -inf where j > i                         causal mask: no looking ahead
        P = softmax(S, axis=-1)                                 (B, H, T, T)  each row sums to 1
        A = P @ v                                               (B, H, T, D)
        y = merge_heads(A) Wo^T + bo                            (B, T, C)

    split_heads reshapes (B, T, C) to (B, T, H, D) and swaps to (B, H, T, D); merge_heads undoes it.

    Backward, the forward read bottom to top (d<name> = dL/d<name>, the shape of <name>)::

        dA = split_heads(o.backward(dy))                        (B, H, T, D)   also dWo, dbo
        dP = dA @ v^T                                           (B, H, T, T)   from A = P @ v
        dv = P^T @ dA                                           (B, H, T, D)   from A = P @ v
        dS = P * (dP - sum_j(dP * P))                           (B, H, T, T)   softmax backward
        dq = dS @ k / sqrt(D)                                   (B, H, T, D)   from S = q @ k^T / sqrt(D)
        dk = dS^T @ q / sqrt(D)                                 (B, H, T, D)   from S = q @ k^T / sqrt(D)
        dx = q.backward(merge_heads(dq)) + k.backward(merge_heads(dk)) + v.backward(merge_heads(dv))
                                                                (B, T, C)      also dWq, dbq, ...

    Two things to notice. The mask needs no backward of its own: masked entries have P = 0, so
    dS = P * (...) is 0 there and no gradient reaches a future key. And x feeds three
    projections, so its gradient is the sum of three terms.

    Why no key bias: a bias bk would add q_i . bk to every score of row i, the same constant
    for every key j, and softmax ignores a constant added to a whole row. Its gradient is
    exactly zero, so it would never move from its initial value; ``k`` is therefore
    ``Linear(C, C, bias=False)``.

    ``value_gain`` scales the initialisation of the value and output projections (DeepNorm's
    beta); ``init`` is the ``Linear`` initialisation. Cache: q, k, v (split) and P.
    """

    def __init__(self, d_model, n_heads, bias=True, init="xavier", value_gain=1.0, rng=None,
                 dtype=np.float64):
        d_model = positive_int(d_model, "d_model", "CausalSelfAttention")
        n_heads = positive_int(n_heads, "n_heads", "CausalSelfAttention")
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.head_dim = d_model, n_heads, d_model // n_heads
        rng = make_rng(rng)
        self.q = Linear(d_model, d_model, bias, init, 1.0, rng, dtype)
        self.k = Linear(d_model, d_model, False, init, 1.0, rng, dtype)  # no key bias: see the docstring
        self.v = Linear(d_model, d_model, bias, init, value_gain, rng, dtype)
        self.o = Linear(d_model, d_model, bias, init, value_gain, rng, dtype)

    def extra_repr(self):
        return f"d_model={self.d_model}, n_heads={self.n_heads}"

    def _split_heads(self, t):
        """(B, T, C) -> (B, H, T, D)."""
        B, T, _ = t.shape
        return t.reshape(B, T, self.n_heads, self.head_dim).transpose(0, 2, 1, 3)

    def _merge_heads(self, t):
        """(B, H, T, D) -> (B, T, C)."""
        B, _, T, _ = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)

    def forward(self, x):
        x = float_input(x, "CausalSelfAttention")
        if x.ndim != 3 or x.shape[-1] != self.d_model:
            raise ValueError(f"CausalSelfAttention expects input of shape (B, T, {self.d_model}), got {x.shape}")
        T = x.shape[1]
        q = self._split_heads(self.q(x))  # (B, H, T, D)
        k = self._split_heads(self.k(x))  # (B, H, T, D)
        v = self._split_heads(self.v(x))  # (B, H, T, D)
        S = q @ k.swapaxes(-1, -2) / math.sqrt(self.head_dim)  # (B, H, T, T)
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # (T, T), True where j > i
        S = np.where(future, -np.inf, S)
        P = softmax(S, axis=-1)  # (B, H, T, T)
        A = P @ v  # (B, H, T, D)
        self._cache = (q, k, v, P)
        return self.o(self._merge_heads(A))  # (B, T, C)

    def backward(self, dy):
        q, k, v, P = self._cached()
        B, H, T, D = q.shape
        dy = check_upstream(dy, (B, T, self.d_model), "CausalSelfAttention")
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
