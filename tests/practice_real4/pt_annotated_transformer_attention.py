"""The Annotated Transformer's MultiHeadedAttention, ported to the attention exercise.

Source: github.com/harvardnlp/annotated-transformer, the_annotated_transformer.py:
``attention(query, key, value, mask=None, dropout=None)``: ``scores = torch.matmul(query,
key.transpose(-2, -1)) / math.sqrt(d_k)``, ``scores.masked_fill(mask == 0, -1e9)``,
``p_attn = scores.softmax(dim=-1)``; MultiHeadedAttention: the four linears, ``lin(x).view(
nbatches, -1, self.h, self.d_k).transpose(1, 2)``, ``x.transpose(1, 2).contiguous().view(
nbatches, -1, self.h * self.d_k)``; subsequent_mask: ``torch.triu(torch.ones(attn_shape),
diagonal=1).type(torch.uint8) == 0``.
Port: self-attention with the skeleton's (d_model, n_heads, causal) and weights wq, wk, wv,
wo used as x @ w (the linears' biases dropped, dropout None); the mask is subsequent_mask
when causal, None otherwise. Kept: the -1e9 fill, self.attn.
"""
import math

import torch
import torch.nn as nn


def attention(query, key, value, mask=None, dropout=None):
    "Compute 'Scaled Dot Product Attention'"
    d_k = query.size(-1)
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    if dropout is not None:
        p_attn = dropout(p_attn)
    return torch.matmul(p_attn, value), p_attn


def subsequent_mask(size):
    "Mask out subsequent positions."
    attn_shape = (1, size, size)
    subsequent_mask = torch.triu(torch.ones(attn_shape), diagonal=1).type(torch.uint8)
    return subsequent_mask == 0


class MultiheadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        "Take in model size and number of heads."
        super().__init__()
        assert d_model % n_heads == 0
        # We assume d_v always equals d_k
        self.d_k = d_model // n_heads
        self.h = n_heads
        self.causal = causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.attn = None

    def forward(self, x):
        mask = subsequent_mask(x.size(1)) if self.causal else None
        if mask is not None:
            # Same mask applied to all h heads.
            mask = mask.unsqueeze(1)
        nbatches = x.size(0)

        # 1) Do all the linear projections in batch from d_model => h x d_k
        query, key, value = [
            (x @ w).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
            for w in (self.wq, self.wk, self.wv)
        ]

        # 2) Apply attention on all the projected vectors in batch.
        x, self.attn = attention(query, key, value, mask=mask)

        # 3) "Concat" using a view and apply a final linear.
        x = (
            x.transpose(1, 2)
            .contiguous()
            .view(nbatches, -1, self.h * self.d_k)
        )
        del query
        del key
        del value
        return x @ self.wo
