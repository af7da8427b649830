"""timm's vision-transformer Attention with qk_norm=True (a LayerNorm on each head's q and k),
ported to the qk_norm exercise (PyTorch track).

Source: github.com/huggingface/pytorch-image-models, timm/models/vision_transformer.py, class
Attention(dim, num_heads=8, qkv_bias=False, qk_norm=False, ..., norm_layer=nn.LayerNorm):
``self.q_norm = norm_layer(self.head_dim) if qk_norm else nn.Identity()`` (and k_norm);
forward: ``qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3,
1, 4)``, ``q, k = self.q_norm(q), self.k_norm(k)``; without fused attention ``q = q *
self.scale; attn = q @ k.transpose(-2, -1); attn = attn.softmax(dim=-1)``; ``x =
x.transpose(1, 2).reshape(B, N, C)``; proj.
Port: the skeleton's (d_model, n_heads, causal) and weights wq, wk, wv, wo (x @ w; qkv's
three blocks, no biases; proj's bias dropped); the LayerNorms' weights renamed gamma_q/gamma_k,
their biases kept as beta_q/beta_k; nn.LayerNorm(head_dim) written as F.layer_norm with its
default eps 1e-5; the non-fused path; a causal mask (timm's ViT has none) as -inf above the
diagonal when causal.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class QKNormSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        assert d_model % n_heads == 0, 'dim should be divisible by num_heads'
        self.num_heads = n_heads
        self.head_dim = d_model // n_heads
        self.scale = self.head_dim ** -0.5
        self.causal = causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        # q_norm = nn.LayerNorm(head_dim), k_norm = nn.LayerNorm(head_dim)
        self.gamma_q = nn.Parameter(torch.ones(self.head_dim))
        self.beta_q = nn.Parameter(torch.zeros(self.head_dim))
        self.gamma_k = nn.Parameter(torch.ones(self.head_dim))
        self.beta_k = nn.Parameter(torch.zeros(self.head_dim))

    def q_norm(self, q):
        return F.layer_norm(q, (self.head_dim,), self.gamma_q, self.beta_q, 1e-5)

    def k_norm(self, k):
        return F.layer_norm(k, (self.head_dim,), self.gamma_k, self.beta_k, 1e-5)

    def forward(self, x):
        B, N, C = x.shape
        qkv = torch.cat([x @ self.wq, x @ self.wk, x @ self.wv], dim=-1)
        qkv = qkv.reshape(B, N, 3, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        q, k = self.q_norm(q), self.k_norm(k)

        q = q * self.scale
        attn = q @ k.transpose(-2, -1)
        if self.causal:
            attn = attn.masked_fill(torch.ones(N, N, dtype=torch.bool).triu(1), float("-inf"))
        attn = attn.softmax(dim=-1)
        x = attn @ v

        x = x.transpose(1, 2).reshape(B, N, C)
        x = x @ self.wo
        return x
