"""minGPT's CausalSelfAttention, ported to the attention exercise (PyTorch track).

Source: github.com/karpathy/minGPT, mingpt/model.py, class CausalSelfAttention: c_attn
(C -> 3C) split into q, k, v; ``k.view(B, T, self.n_head, C // self.n_head).transpose(1,
2)``; ``att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))``; ``att =
att.masked_fill(self.bias[:,:,:T,:T] == 0, float('-inf'))`` with the causal mask registered as
a buffer named bias; ``F.softmax(att, dim=-1)``; heads re-assembled with
``transpose(1, 2).contiguous().view(B, T, C)``; c_proj.
Port: the skeleton's (d_model, n_heads, causal) and its weights wq, wk, wv, wo (C, C) used
as x @ w, no Linear biases (c_attn's three blocks become wq, wk, wv); the dropouts removed
(p = 0); block_size an argument (128); the mask applied only when causal (minGPT is always
causal). Kept: the registered tril buffer "bias".
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class MultiheadSelfAttention(nn.Module):
    """
    A vanilla multi-head masked self-attention layer with a projection at the end.
    """

    def __init__(self, d_model, n_heads, causal=False, block_size=128):
        super().__init__()
        assert d_model % n_heads == 0
        # key, query, value projections for all heads
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        # output projection
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        # causal mask to ensure that attention is only applied to the left in the input sequence
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                             .view(1, 1, block_size, block_size))
        self.n_head = n_heads
        self.n_embd = d_model
        self.causal = causal

    def forward(self, x):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        if self.causal:
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
        att = F.softmax(att, dim=-1)
        y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

        # output projection
        y = y @ self.wo
        return y
