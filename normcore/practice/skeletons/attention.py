"""Practice: multi-head self-attention, causal or not, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer matches
torch.nn.MultiheadAttention(d_model, n_heads, bias=False) used as self-attention (and its
causal mask). Its backward gives dL/dx and the four weight gradients. Then:

    normcore practice check THIS_FILE.py

The convention (keep it: the grader sets wq, wk, wv and wo). The grader reads their
gradients after the backward. x has shape (B, T, C), C = d_model, H = n_heads, D = C / H
channels per head; the weights are (C, C), used as ``x @ w``, no biases::

    q, k, v = x @ wq, x @ wk, x @ wv                         (B, T, C)
    split_heads: (B, T, C) -> (B, T, H, D) -> (B, H, T, D)   head h owns channels h*D .. h*D + D - 1
    scores  = q @ k^T / sqrt(D)                              (B, H, T, T)  [.., i, j]: query i,
                                                                           key j
    causal: scores[.., i, j] = -inf where j > i              BEFORE the softmax
    attn    = softmax(scores) over the keys (the last axis)  each row sums to 1
    out     = attn @ v                                       (B, H, T, D)
    y       = merge_heads(out) @ wo                          (B, T, C)  merge_heads: the inverse

    dx, dwq, dwk, dwv, dwo = ?     derive them, node by node, from dy (B, T, C)

The grader runs your layer next to normcore's MultiheadSelfAttention on several (B, T, C, H)
(one head, as many heads as channels, one position), causal and not, float32, scores large
enough to overflow exp. It calls the backward twice in a row. When a check fails it names
the well-known mistake that produces exactly your numbers. NumPy only: do not import
normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your layer
works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> att = MultiheadSelfAttention(4, 2, causal=True)
    >>> w = np.arange(16.0).reshape(4, 4) / 8 - 1
    >>> att.wq.data, att.wk.data, att.wv.data, att.wo.data = w, w.T, np.eye(4), w[::-1]
    >>> x = np.array([[[1.0, 0.0, -1.0, 2.0], [0.5, 1.0, 0.0, -0.5], [0.0, -1.0, 2.0, 1.0]]])
    >>> y = att.forward(x)                               # (1, 3, 4)
    >>> np.round(y[0, :2], 4).tolist()                   # positions 0 and 1
    [[-1.0, -0.75, -0.5, -0.25], [0.3794, 0.5163, 0.6533, 0.7902]]
    >>> np.round(y[0, 2], 4).tolist()                    # position 2
    [-1.4849, -1.1697, -0.8545, -0.5393]
    >>> dy = np.array([[[1.0, -1.0, 0.0, 0.5], [0.0, 2.0, -1.0, 1.0], [0.5, 0.0, 1.0, -2.0]]])
    >>> dx = att.backward(dy)                            # (1, 3, 4)
    >>> np.round(dx[0, :2], 4).tolist()
    [[1.4532, 0.8014, 0.3335, 0.0263], [0.7742, -0.0744, -1.0536, -2.3002]]
    >>> np.round(att.wq.grad[0], 4).tolist(), np.round(att.wo.grad[0], 4).tolist()
    ([-0.0117, 0.0017, -0.131, -0.2474], [1.2177, 0.5835, -0.3564, 0.421])
    >>> full = MultiheadSelfAttention(4, 2)              # not causal: position 0 sees every key
    >>> full.wq.data, full.wk.data, full.wv.data, full.wo.data = w, w.T, np.eye(4), w[::-1]
    >>> np.round(full.forward(x)[0, 0], 4).tolist()
    [-1.1397, -0.8728, -0.6058, -0.3389]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MultiheadSelfAttention:
    """Self-attention with ``n_heads`` heads over an input (B, T, d_model); causal or not.

    The contract the grader relies on (keep these names):

    - ``MultiheadSelfAttention(d_model, n_heads, causal=False)``
    - ``self.wq``, ``self.wk``, ``self.wv``, ``self.wo``: Parameters of shape (C, C), used as
      ``x @ wq`` (in, out), no biases.
    - ``forward(x) -> y``: x of shape (B, T, C); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward, in dy's dtype; *adds* (+=) dL/dwq,
      dL/dwk, dL/dwv, dL/dwo to the ``.grad`` of each weight (the caller zeroes them).
    """

    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def forward(self, x):
        # TODO: q, k, v; split the heads; the scaled scores; the causal mask (if self.causal);
        #       a softmax safe for scores around 1000; out; merge the heads; y.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: MultiheadSelfAttention.forward")

    def backward(self, dy):
        # TODO: dwo and d(out); dattn and dv; dscores through the softmax's whole Jacobian;
        #       dq and dk; dwq, dwk, dwv (accumulate with +=); dx (x is used three times).
        raise NotImplementedError("TODO: MultiheadSelfAttention.backward")
