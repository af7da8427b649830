"""A hand-written (手撕) multi-head attention from a Chinese LLM-interview repository, ported to
the attention exercise (PyTorch track).

Source: github.com/harmonytan/ShouSi, Attention/Multi-Head-Attention.py (commit 75185924),
class MHA: fc_q, fc_k, fc_v, fc_o; heads moved to the front with ``q.view(batch, n_q,
self.num_head, self.d_k).permute(2, 0, 1, 3).contiguous().view(-1, n_q, self.d_k)``;
``attention = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_k)``; an additive mask
``mask.repeat(self.num_head, 1, 1)``; ``nn.Softmax(dim=2)``; heads merged back with
``output.view(self.num_head, batch, n_q, self.d_v).permute(1, 2, 0, 3).contiguous().view(
batch, n_q, -1)``; returns (attention, output).
Port: self-attention (q = k = v = x) with the skeleton's (d_model, n_heads, causal) and its
weights wq, wk, wv, wo used as x @ w (the Linear biases dropped); the caller's additive mask
built inside: -inf above the diagonal when causal, zeros otherwise; forward returns the
output only.
"""
import torch
import torch.nn as nn
import math


class MultiheadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        # d_k表示head dimension，d_k * num_head 就是embedding的长度
        super().__init__()
        self.num_head = n_heads
        self.d_k = d_model // n_heads
        self.d_v = d_model // n_heads
        self.d_o = d_model
        self.causal = causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.softmax = nn.Softmax(dim=2)

    def forward(self, x):
        batch, n_q, dimension_q = x.size()
        n_k = n_v = n_q
        mask = torch.zeros(batch, n_q, n_k, dtype=x.dtype)
        if self.causal:
            mask = mask.masked_fill(torch.ones(n_q, n_k, dtype=torch.bool).triu(1), float("-inf"))

        q = x @ self.wq
        k = x @ self.wk
        v = x @ self.wv
        q = q.view(batch, n_q, self.num_head, self.d_k).permute(2, 0, 1, 3).contiguous().view(-1, n_q, self.d_k)
        k = k.view(batch, n_k, self.num_head, self.d_k).permute(2, 0, 1, 3).contiguous().view(-1, n_k, self.d_k)
        v = v.view(batch, n_v, self.num_head, self.d_v).permute(2, 0, 1, 3).contiguous().view(-1, n_v, self.d_v)

        attention = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d_k)
        mask = mask.repeat(self.num_head, 1, 1)
        attention = attention + mask
        attention = self.softmax(attention)

        output = torch.matmul(attention, v)
        output = output.view(self.num_head, batch, n_q, self.d_v).permute(1, 2, 0, 3).contiguous().view(batch, n_q, -1)
        output = output @ self.wo
        return output
