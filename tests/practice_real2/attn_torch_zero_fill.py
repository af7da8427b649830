# Multi-head self-attention module; the causal mask is applied by multiplying the scores
# with a lower-triangular matrix of ones.
import torch
from torch import nn


class MultiheadSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        assert d_model % n_heads == 0
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q, k, v = ((x @ w).view(B, T, H, D).transpose(1, 2) for w in (self.wq, self.wk, self.wv))
        scores = q @ k.transpose(-2, -1) / D ** 0.5
        if self.causal:
            scores = scores * torch.tril(torch.ones(T, T, dtype=x.dtype))
        scores = scores - scores.amax(-1, keepdim=True)
        att = scores.exp()
        att = att / att.sum(-1, keepdim=True)
        out = (att @ v).transpose(1, 2).reshape(B, T, C)
        return out @ self.wo
