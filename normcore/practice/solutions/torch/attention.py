"""Multi-head self-attention as a torch.nn.Module, forward only: a reference answer of the
PyTorch track.

Standalone (torch only). Semantics as torch.nn.MultiheadAttention(d_model, n_heads,
bias=False) used as self-attention (query = key = value = x, batch_first=True), causal with a
boolean mask that is True above the diagonal; the weights are nn.Parameters stored as
(in, out), so that ``q = x @ wq``. Autograd computes every gradient.

A name in brackets at the end of a line, such as ``[split-heads]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class MultiheadSelfAttention(nn.Module):
    """Self-attention with H heads; input x (B, T, C), C = d_model, D = C / H per head.

        q, k, v = split_heads(x @ wq), split_heads(x @ wk), split_heads(x @ wv)   (B, H, T, D)
        scores  = q @ k^T / sqrt(D)                   (B, H, T, T)  query i, key j
        scores  = -inf where j > i (causal only)      masked before the softmax
        attn    = softmax(scores) over the keys       each row sums to 1
        y       = merge_heads(attn @ v) @ wo          (B, T, C)

    split_heads views (B, T, C) as (B, T, H, D) and swaps T and H; merge_heads undoes it.
    """

    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)  # [wq]
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)

    def split_heads(self, t):
        B, T, C = t.shape
        H = self.n_heads
        return t.reshape(B, T, H, C // H).transpose(1, 2)                    # (B, H, T, D) [split-heads]

    def merge_heads(self, t):
        B, H, T, D = t.shape
        return t.transpose(1, 2).reshape(B, T, H * D)                        # (B, T, C) [merge-heads]

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.n_heads                                                # channels per head
        q = self.split_heads(x @ self.wq)                                    # (B, H, T, D)
        k = self.split_heads(x @ self.wk)
        v = self.split_heads(x @ self.wv)
        scores = q @ k.transpose(-2, -1) / D ** 0.5                          # (B, H, T, T) [scores]
        future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1) & self.causal  # key j > query i [future]
        scores = scores.masked_fill(future, float("-inf"))                   # [mask]
        z = scores - scores.amax(dim=-1, keepdim=True)                       # the row's max is 0 [shift]
        e = torch.exp(z)
        attn = e / e.sum(dim=-1, keepdim=True)                               # rows sum to 1 [softmax]
        return self.merge_heads(attn @ v) @ self.wo                          # (B, T, C)
