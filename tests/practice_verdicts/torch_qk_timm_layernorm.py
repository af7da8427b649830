"""timm's Attention(qk_norm=True) with its LayerNorm per head (timm/layers/attention.py:
``self.q_norm = norm_layer(head_dim)``, ``q, k = self.q_norm(q), self.k_norm(k)`` after the
split into heads), the QK-LayerNorm of ViT-22B, ported to the skeleton's names: the
LayerNorm's weight is gamma_q (gamma_k), and its bias, zero at the start, stays a parameter
(beta_q, beta_k); eps the machine epsilon, as the skeleton asks."""

import torch
import torch.nn.functional as F
from torch import nn


class QKNormSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        head_dim = d_model // n_heads
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.gamma_q = nn.Parameter(torch.ones(head_dim))
        self.gamma_k = nn.Parameter(torch.ones(head_dim))
        self.beta_q = nn.Parameter(torch.zeros(head_dim))
        self.beta_k = nn.Parameter(torch.zeros(head_dim))

    def forward(self, x):
        B, N, C = x.shape
        H, D = self.n_heads, C // self.n_heads
        q = (x @ self.wq).reshape(B, N, H, D).transpose(1, 2)
        k = (x @ self.wk).reshape(B, N, H, D).transpose(1, 2)
        v = (x @ self.wv).reshape(B, N, H, D).transpose(1, 2)
        eps = torch.finfo(x.dtype).eps
        q = F.layer_norm(q, (D,), self.gamma_q, self.beta_q, eps)
        k = F.layer_norm(k, (D,), self.gamma_k, self.beta_k, eps)
        attn = (q * D ** -0.5) @ k.transpose(-2, -1)
        if self.causal:
            future = torch.ones(N, N, dtype=torch.bool).triu(diagonal=1)
            attn = attn.masked_fill(future, float("-inf"))
        attn = attn.softmax(dim=-1)
        return (attn @ v).transpose(1, 2).reshape(B, N, C) @ self.wo
