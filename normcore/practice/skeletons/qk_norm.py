"""Practice: multi-head self-attention with RMSNorm QK-norm, forward and backward, by hand in
NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer matches normcore's
MultiheadSelfAttention(d_model, n_heads, causal, bias=False, qk_norm="rmsnorm"): the
self-attention of the ``attention`` exercise with each head's query and key normalised by an
RMSNorm (QK-norm per head, as in Gemma 3 and Qwen3). Then:

    normcore practice check THIS_FILE.py

The convention (keep it: the grader sets wq, wk, wv, wo, gamma_q and gamma_k). The grader
reads their gradients after the backward. x has shape (B, T, C), C = d_model, H = n_heads, D
= C / H channels per head; the weights are (C, C), used as ``x @ w``, no biases; gamma_q and
gamma_k are (D,), ONE weight each, shared by every head::

    q, k, v = split_heads(x @ wq), ..(x @ wk), ..(x @ wv)    (B, H, T, D)  head h owns
                                                                           channels h*D .. h*D + D - 1
    qn = q / sqrt(mean(q ** 2 over D) + eps) * gamma_q       (B, H, T, D)  each head and position
    kn = k / sqrt(mean(k ** 2 over D) + eps) * gamma_k       (B, H, T, D)  eps = np.finfo(x.dtype).eps
    scores  = qn @ kn^T / sqrt(D)                            (B, H, T, T)  the scale AFTER the norm
    causal: scores[.., i, j] = -inf where j > i              BEFORE the softmax
    attn    = softmax(scores) over the keys (the last axis)
    y       = merge_heads(attn @ v) @ wo                     (B, T, C)

    dx, dwq, dwk, dwv, dwo, dgamma_q, dgamma_k = ?     derive them, node by node, from dy

The grader runs your layer next to normcore's on several (B, T, C, H) (one head, one
position), causal and not, float32, large inputs, q and k so small that eps matters. It
calls the backward twice in a row. When a check fails it names the well-known mistake that
produces exactly your numbers. NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your layer
works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> att = QKNormSelfAttention(4, 2, causal=True)
    >>> w = np.arange(16.0).reshape(4, 4) / 8 - 1
    >>> att.wq.data, att.wk.data, att.wv.data, att.wo.data = w, w.T, np.eye(4), w[::-1]
    >>> att.gamma_q.data, att.gamma_k.data = np.array([1.0, 2.0]), np.array([0.5, -1.0])
    >>> x = np.array([[[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -0.5], [0.0, -1.0, 2.0, 1.0]]])
    >>> y = att.forward(x)                               # (1, 3, 4)
    >>> np.round(y[0, :2], 4).tolist()                   # positions 0 and 1
    [[-1.0, -0.75, -0.5, -0.25], [0.0537, 0.2214, 0.389, 0.5566]]
    >>> np.round(y[0, 2], 4).tolist()                    # position 2
    [-0.9039, -0.6368, -0.3696, -0.1025]
    >>> dy = np.array([[[1.0, -1.0, 0.0, 0.5], [0.0, 2.0, -1.0, 1.0], [0.5, 0.0, 1.0, -2.0]]])
    >>> dx = att.backward(dy)                            # (1, 3, 4)
    >>> np.round(dx[0, :2], 4).tolist()
    [[0.7374, 0.0547, -0.5382, -1.0523], [0.2119, -0.153, -0.5698, -1.1411]]
    >>> np.round(att.gamma_q.grad, 4).tolist(), np.round(att.gamma_k.grad, 4).tolist()
    ([0.1872, -0.0222], [0.3745, 0.0444])
    >>> np.round(att.wq.grad[0], 4).tolist()
    [0.0044, -0.0048, -0.026, 0.0297]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class QKNormSelfAttention:
    """Self-attention with ``n_heads`` heads and RMSNorm on each head's q and k; x (B, T, C).

    The contract the grader relies on (keep these names):

    - ``QKNormSelfAttention(d_model, n_heads, causal=False)``
    - ``self.wq``, ``self.wk``, ``self.wv``, ``self.wo``: Parameters of shape (C, C), used as
      ``x @ wq`` (in, out), no biases.
    - ``self.gamma_q``, ``self.gamma_k``: Parameters of shape (D,), D = C / H, the QK-norm
      weights, each shared by every head.
    - ``forward(x) -> y``: x of shape (B, T, C); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype; *adds* (+=) the
      gradients of the six parameters to their ``.grad`` (the caller zeroes them).
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
        self.gamma_q = Parameter(np.ones(D, dtype))
        self.gamma_k = Parameter(np.ones(D, dtype))

    def forward(self, x):
        # TODO: q, k, v; split the heads; RMSNorm each head's q and k over its D channels (with
        #       gamma_q, gamma_k); the scaled scores; the causal mask; the softmax; out; y.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: QKNormSelfAttention.forward")

    def backward(self, dy):
        # TODO: the attention's backward down to dqn and dkn (the normalised q and k); then each
        #       RMSNorm's backward (dgamma_q, dgamma_k with +=) to dq and dk; the weights; dx.
        raise NotImplementedError("TODO: QKNormSelfAttention.backward")
