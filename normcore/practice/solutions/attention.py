"""Multi-head self-attention, causal or not, forward and backward, by hand in NumPy: a reference
answer.

Standalone (numpy only). Semantics as torch.nn.MultiheadAttention(d_model, n_heads,
bias=False) used as self-attention (query = key = value = x, batch_first=True), causal with
a boolean attn_mask that is True above the diagonal; the weights are stored as (in, out), so
that ``q = x @ wq`` (torch's in_proj_weight holds wq^T, wk^T, wv^T stacked; out_proj.weight
is wo^T).

A name in brackets at the end of a line, such as ``[split-heads]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MultiheadSelfAttention:
    """Self-attention with H heads; input x (B, T, C), C = d_model, D = C / H per head.

    Forward (every product is a matmul over the last two axes, batched over the others)::

        q, k, v = x @ wq, x @ wk, x @ wv                         (B, T, C)    no biases
        q, k, v = split_heads(q), split_heads(k), split_heads(v) (B, H, T, D)
        scores  = q @ k^T / sqrt(D)                              (B, H, T, T) [.., i, j]: query i,
                                                                              key j
        scores  = -inf where j > i (causal only)                 masked BEFORE the softmax
        attn    = softmax(scores) over the keys (the last axis)  (B, H, T, T) each row sums to 1
        out     = attn @ v                                       (B, H, T, D)
        y       = merge_heads(out) @ wo                          (B, T, C)

    split_heads reshapes (B, T, C) to (B, T, H, D) (head h owns channels h*D .. h*D + D - 1
    of every position) and swaps the T and H axes to (B, H, T, D); merge_heads swaps back,
    then reshapes. A bare reshape of (B, T, C) to (B, H, T, D) reads the memory in the wrong
    order: "head" 0 would get the first T*D numbers, whole positions' worth of channels.

    The scale is 1 / sqrt(D), the head's own width, not 1 / sqrt(C): a score q . k sums the D
    products of one head, so for unit-variance entries its variance is D, and dividing by
    sqrt(D) brings it back to 1 whatever the number of heads (sqrt(C) would flatten the
    softmax by sqrt(H) more). The same constant multiplies dq and dk in the backward.

    Backward, node by node, read bottom to top (dname = dL/dname, the shape of name; for
    y = a @ w the rule is da = dy @ w^T and dw = a^T @ dy summed over every row)::

        dwo     += merge_heads(out)^T @ dy                       (C, C)  over the B*T rows
        dout     = split_heads(dy @ wo^T)                        (B, H, T, D)
        dattn    = dout @ v^T                                    (B, H, T, T) from out = attn @ v
        dv       = attn^T @ dout                                 (B, H, T, D) key j gets dout[i]
                                                                  * attn[i, j] from each query i
        dscores  = attn * (dattn - sum_j(dattn * attn))          (B, H, T, T) softmax Jacobian
        dq       = dscores @ k / sqrt(D)                         (B, H, T, D) from q @ k^T / sqrt(D)
        dk       = dscores^T @ q / sqrt(D)                       (B, H, T, D) (k sits transposed)
        dx       = merge_heads(dq) @ wq^T                        (B, T, C)    the query's share
                 + merge_heads(dk) @ wk^T                                     the key's share
                 + merge_heads(dv) @ wv^T                                     the value's share
        dwq     += x^T @ merge_heads(dq), likewise dwk, dwv      (C, C)

    The softmax's Jacobian. In one row (one query), with a = attn and s = scores over the keys,
    a_l = exp(s_l) / sum_m exp(s_m), so d a_l / d s_j = a_l ([l == j] - a_j): a full matrix
    diag(a) - a a^T, not its diagonal a (1 - a) alone. Applied to dattn without forming it:
    dscores_j = sum_l dattn_l a_l ([l == j] - a_j) = a_j (dattn_j - sum_l dattn_l a_l).
    The max subtracted before exp (the forward's shift) is a constant per row: it changes no
    number of attn and gets no gradient, but without it exp overflows for scores above 88 in
    float32 (709 in float64) and inf / inf is nan.

    The mask. The causal mask is a constant added to the scores (0 or -inf) *before* the
    softmax, so that the softmax normalises over the allowed keys only: attn is 0 at a masked
    key and every row still sums to 1. It needs no backward of its own: where the mask is
    -inf, attn = 0, so dscores = attn * (...) = 0 there. Masking after the softmax (attn times
    a 0/1 mask) leaves rows that sum to less than 1; filling masked scores with 0 instead of
    -inf gives the future keys weight exp(0) / sum, i.e. the model still sees the future.
    The masked triangle is strictly above the diagonal (np.triu(..., k=1)): query i keeps keys
    j <= i, itself included. Masking below it (tril) hides the past instead; masking the
    diagonal too leaves the first query with no key at all, and its softmax is 0 / 0 = nan.

    Three shares. x is used three times (q, k and v are all projections of it), so dx is the
    sum of three terms; dropping one leaves dx wrong wherever that path carries gradient.

    The axes matter: the softmax runs over the keys (j, the last axis), so dscores' row sum
    is taken over that axis too; and dk carries dscores transposed (dk = dscores^T q, not
    dscores q by symmetry with dq), since row i of the scores belongs to query i and column j
    to key j; likewise out = attn v gives dv = attn^T dout.

    Cache: x, q, k, v (split), attn and out (split). ``backward`` returns dx in dy's dtype and adds
    into ``.grad`` of wq, wk, wv, wo (the caller zeroes them).
    """

    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def split_heads(self, t):
        (B, T, C), H = t.shape, self.n_heads
        return t.reshape(B, T, H, C // H).transpose(0, 2, 1, 3)              # (B, H, T, D) [split-heads]

    def merge_heads(self, t):
        B, H, T, D = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, H * D)                  # (B, T, C) [merge-heads]

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.n_heads                                                # channels per head
        wq, wk, wv, wo = (w.data.astype(x.dtype) for w in (self.wq, self.wk, self.wv, self.wo))
        q = self.split_heads(x @ wq)                                         # (B, H, T, D)
        k = self.split_heads(x @ wk)                                         # (B, H, T, D)
        v = self.split_heads(x @ wv)                                         # (B, H, T, D)
        scores = q @ k.swapaxes(-1, -2) / D ** 0.5                           # (B, H, T, T) [scores]
        future = np.triu(np.ones((T, T), dtype=bool), k=1) & self.causal  # (T, T) key j > query i [future]
        scores = np.where(future, -np.inf, scores)                           # (B, H, T, T) [mask]
        z = scores - scores.max(axis=-1, keepdims=True)                      # (B, H, T, T) max 0 [shift]
        e = np.exp(z)                                                        # (B, H, T, T)
        attn = e / e.sum(axis=-1, keepdims=True)                             # (B, H, T, T) sum 1 [softmax]
        out = attn @ v                                                       # (B, H, T, D)
        self.cache = (x, q, k, v, attn, out)
        return (self.merge_heads(out) @ wo).astype(x.dtype)                  # (B, T, C)

    def backward(self, dy):
        x, q, k, v, attn, out = self.cache
        B, H, T, D = q.shape
        C = H * D
        wq, wk, wv, wo = (w.data.astype(dy.dtype) for w in (self.wq, self.wk, self.wv, self.wo))
        self.wo.grad += self.merge_heads(out).reshape(-1, C).T @ dy.reshape(-1, C)  # (C, C) [dwo]
        dout = self.split_heads(dy @ wo.T)                                   # (B, H, T, D)
        dattn = dout @ v.swapaxes(-1, -2)                                    # (B, H, T, T)
        dv = attn.swapaxes(-1, -2) @ dout                                    # (B, H, T, D) [dv]
        dscores = attn * (dattn - (dattn * attn).sum(axis=-1, keepdims=True))  # (B, H, T, T) [dscores]
        dq = dscores @ k / D ** 0.5                                          # (B, H, T, D) [dq]
        dk = dscores.swapaxes(-1, -2) @ q / D ** 0.5                         # (B, H, T, D) [dk]
        dq, dk, dv = self.merge_heads(dq), self.merge_heads(dk), self.merge_heads(dv)  # (B, T, C)
        rows = x.reshape(-1, C)                                              # (B*T, C)
        self.wq.grad += rows.T @ dq.reshape(-1, C)                           # (C, C) [dwq]
        self.wk.grad += rows.T @ dk.reshape(-1, C)                           # (C, C) [dwk]
        self.wv.grad += rows.T @ dv.reshape(-1, C)                           # (C, C) [dwv]
        dx_q = dq @ wq.T                                                     # (B, T, C)
        dx_k = dk @ wk.T                                                     # (B, T, C)
        dx_v = dv @ wv.T                                                     # (B, T, C)
        dx = dx_q + dx_k + dx_v                                              # (B, T, C) [dx]
        return dx.astype(dy.dtype)
