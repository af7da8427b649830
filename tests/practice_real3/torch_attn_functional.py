"""PyTorch self-attention with F.softmax and masked_fill for the causal mask."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class MultiheadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        D = C // H

        def heads(t):
            return t.view(B, T, H, D).transpose(1, 2)

        q, k, v = heads(x @ self.wq), heads(x @ self.wk), heads(x @ self.wv)
        scores = q @ k.transpose(-2, -1) / math.sqrt(D)
        if self.causal:
            future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            scores = scores.masked_fill(future, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)
        return out @ self.wo
