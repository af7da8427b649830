"""Multi-head self-attention with RMSNorm QK-norm, forward and backward, by hand in NumPy: a
reference answer.

Standalone (numpy only). Semantics as normcore's ``MultiheadSelfAttention(d_model, n_heads,
causal, bias=False, qk_norm="rmsnorm")``: the attention of the ``attention`` exercise, with
each head's query and key normalised by an RMSNorm over the head's D channels (one weight
(D,) for the queries, one for the keys, each shared by every head) after the heads are
split and before the 1 / sqrt(D) scale (QK-norm per head, as in Gemma 3 and Qwen3; OLMo 2
normalises the whole projection before the split instead). The weights are stored as (in, out), so that ``q = x @ wq``.

A name in brackets at the end of a line, such as ``[norm-axes]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class QKNormSelfAttention:
    """Self-attention with H heads and RMSNorm QK-norm; x (B, T, C), C = d_model, D = C / H.

    Forward::

        q, k, v = split_heads(x @ wq), split_heads(x @ wk), split_heads(x @ wv)   (B, H, T, D)
        rrms_q  = 1 / sqrt(mean(q ** 2 over D) + eps)        (B, H, T, 1) one per head and position
        qn      = q * rrms_q * gamma_q                       (B, H, T, D) gamma_q (D,), every head
        kn      = k * rrms_k * gamma_k                       (B, H, T, D) likewise
        scores  = qn @ kn^T / sqrt(D)                        (B, H, T, T) the scale after the norm
        scores  = -inf where j > i (causal only); attn = softmax(scores) over the keys
        y       = merge_heads(attn @ v) @ wo                 (B, T, C)

    eps is the machine epsilon of x's dtype (as torch's and normcore's RMSNorm(eps=None)).

    Where the norm goes. Each head's q and k are normalised over the head's own D channels,
    after split_heads. An RMS over the whole projection (OLMo 2's variant, not this exercise)
    lets one head's size set another head's scale and loosens each head's logit bound H times.
    The 1 / sqrt(D) comes after the norm: normalising q / sqrt(D) undoes the scale (RMSNorm is
    scale invariant, up to eps), and the scores end up sqrt(D) too large.

    Backward, node by node (the attention's backward up to dqn and dkn, then the norms)::

        dscores = attn * (dattn - sum_j(dattn * attn))       as in the attention exercise
        dqn     = dscores @ kn / sqrt(D)                     (B, H, T, D)
        dkn     = dscores^T @ qn / sqrt(D)                   (B, H, T, D)
        dgamma_q += sum over B, H, T of dqn * q_hat          (D,) q_hat = q * rrms_q: the weight
                                                             is shared, so every head adds its share
        dq_hat  = dqn * gamma_q
        dq      = rrms_q * (dq_hat - q_hat * mean(dq_hat * q_hat over D))   RMSNorm's backward
        (dk, dgamma_k likewise from dkn)
        dx      = merge(dq) @ wq^T + merge(dk) @ wk^T + merge(dv) @ wv^T

    The norm's backward cannot be skipped: qn depends on all D channels of its head through
    rrms, so dq is dqn projected off q_hat and scaled by gamma_q and rrms_q, not dqn itself.
    Both q and k are normalised: with one of them raw, the scores are no longer bounded by
    sqrt(D) max|gamma_q| max|gamma_k|.
    """

    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))
        D = d_model // n_heads
        self.gamma_q = Parameter(np.ones(D, dtype))                        # (D,), every head's queries
        self.gamma_k = Parameter(np.ones(D, dtype))                        # (D,), every head's keys
        self.norm_axes = (-1,)                                             # each head's D channels [norm-axes]

    def split_heads(self, t):
        (B, T, C), H = t.shape, self.n_heads
        return t.reshape(B, T, H, C // H).transpose(0, 2, 1, 3)              # (B, H, T, D)

    def merge_heads(self, t):
        B, H, T, D = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, H * D)                  # (B, T, C)

    def rms_norm(self, t, gamma):
        """RMSNorm of t (B, H, T, D) over the norm axes, times gamma (D,); and its cache."""
        eps = np.finfo(t.dtype).eps
        ms = (t ** 2).mean(axis=self.norm_axes, keepdims=True)              # (B, H, T, 1) [mean-square]
        rrms = 1.0 / np.sqrt(ms + eps)                                       # (B, H, T, 1) [rrms]
        t_hat = t * rrms                                                     # (B, H, T, D)
        return t_hat * gamma, (t_hat, rrms)

    def rms_norm_backward(self, dout, gamma, cache, param):
        """dt from dout for the RMSNorm that made ``cache``; adds dgamma into ``param.grad``."""
        t_hat, rrms = cache
        param.grad += (dout * t_hat).sum(axis=(0, 1, 2))                     # (D,) [dgamma]
        dt_hat = dout * gamma                                                # (B, H, T, D)
        mean_dt_hat_t_hat = (dt_hat * t_hat).mean(axis=self.norm_axes, keepdims=True)
        return rrms * (dt_hat - t_hat * mean_dt_hat_t_hat)                   # (B, H, T, D) [dnorm]

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.n_heads
        wq, wk, wv, wo = (w.data.astype(x.dtype) for w in (self.wq, self.wk, self.wv, self.wo))
        gq, gk = self.gamma_q.data.astype(x.dtype), self.gamma_k.data.astype(x.dtype)
        q = self.split_heads(x @ wq)                                         # (B, H, T, D)
        k = self.split_heads(x @ wk)                                         # (B, H, T, D)
        v = self.split_heads(x @ wv)                                         # (B, H, T, D)
        qn, q_cache = self.rms_norm(q, gq)                                   # (B, H, T, D) [q-norm]
        kn, k_cache = self.rms_norm(k, gk)                                   # (B, H, T, D) [k-norm]
        scores = qn @ kn.swapaxes(-1, -2) / D ** 0.5                         # (B, H, T, T) [scores]
        future = np.triu(np.ones((T, T), dtype=bool), k=1) & self.causal     # (T, T) key j > query i
        scores = np.where(future, -np.inf, scores)                           # (B, H, T, T)
        z = scores - scores.max(axis=-1, keepdims=True)                      # (B, H, T, T)
        e = np.exp(z)
        attn = e / e.sum(axis=-1, keepdims=True)                             # (B, H, T, T)
        out = attn @ v                                                       # (B, H, T, D)
        self.cache = (x, qn, kn, v, attn, out, q_cache, k_cache)
        return (self.merge_heads(out) @ wo).astype(x.dtype)                  # (B, T, C)

    def backward(self, dy):
        x, qn, kn, v, attn, out, q_cache, k_cache = self.cache
        B, H, T, D = qn.shape
        C = H * D
        wq, wk, wv, wo = (w.data.astype(dy.dtype) for w in (self.wq, self.wk, self.wv, self.wo))
        gq, gk = self.gamma_q.data.astype(dy.dtype), self.gamma_k.data.astype(dy.dtype)
        self.wo.grad += self.merge_heads(out).reshape(-1, C).T @ dy.reshape(-1, C)  # (C, C) [dwo]
        dout = self.split_heads(dy @ wo.T)                                   # (B, H, T, D)
        dattn = dout @ v.swapaxes(-1, -2)                                    # (B, H, T, T)
        dv = attn.swapaxes(-1, -2) @ dout                                    # (B, H, T, D)
        dscores = attn * (dattn - (dattn * attn).sum(axis=-1, keepdims=True))  # (B, H, T, T)
        dqn = dscores @ kn / D ** 0.5                                        # (B, H, T, D) [dqn]
        dkn = dscores.swapaxes(-1, -2) @ qn / D ** 0.5                       # (B, H, T, D) [dkn]
        dq = self.rms_norm_backward(dqn, gq, q_cache, self.gamma_q)          # (B, H, T, D) [dq]
        dk = self.rms_norm_backward(dkn, gk, k_cache, self.gamma_k)          # (B, H, T, D) [dk]
        dq, dk, dv = self.merge_heads(dq), self.merge_heads(dk), self.merge_heads(dv)  # (B, T, C)
        rows = x.reshape(-1, C)                                              # (B*T, C)
        self.wq.grad += rows.T @ dq.reshape(-1, C)                           # (C, C) [dwq]
        self.wk.grad += rows.T @ dk.reshape(-1, C)                           # (C, C) [dwk]
        self.wv.grad += rows.T @ dv.reshape(-1, C)                           # (C, C) [dwv]
        dx = dq @ wq.T + dk @ wk.T + dv @ wv.T                               # (B, T, C)
        return dx.astype(dy.dtype)
