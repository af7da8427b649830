"""Self-attention with QK-norm as a torch.nn.Module, forward only: a reference answer of the
PyTorch track.

Standalone (torch only). The attention exercise's layer with an RMSNorm on each head's query
and key before the scores: eps the machine epsilon of the dtype, weights gamma_q and gamma_k
of shape (D,) shared by every head, then the usual 1 / sqrt(D) scale. The weights are
nn.Parameters; autograd computes every gradient.

A name in brackets at the end of a line, such as ``[q-norm]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class QKNormSelfAttention(nn.Module):
    """Self-attention with H heads and RMSNorm QK-norm; x (B, T, C), C = d_model, D = C / H.

        q, k, v = split_heads(x @ wq), split_heads(x @ wk), split_heads(x @ wv)   (B, H, T, D)
        qn      = q / sqrt(mean(q**2 over D) + eps) * gamma_q      one RMS per head and position
        kn      = k / sqrt(mean(k**2 over D) + eps) * gamma_k
        scores  = qn @ kn^T / sqrt(D), causal mask, softmax over the keys
        y       = merge_heads(attn @ v) @ wo
    """

    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.norm_dims = (-1,)  # each head's D channels [norm-dims]
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.gamma_q = nn.Parameter(torch.ones(d_model // n_heads))  # [gamma-q]
        self.gamma_k = nn.Parameter(torch.ones(d_model // n_heads))

    def split_heads(self, t):
        B, T, C = t.shape
        H = self.n_heads
        return t.reshape(B, T, H, C // H).transpose(1, 2)                    # (B, H, T, D)

    def merge_heads(self, t):
        B, H, T, D = t.shape
        return t.transpose(1, 2).reshape(B, T, H * D)                        # (B, T, C)

    def rms_norm(self, t, gamma):
        eps = torch.finfo(t.dtype).eps
        return t * torch.rsqrt(t.pow(2).mean(dim=self.norm_dims, keepdim=True) + eps) * gamma  # [rrms]

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.n_heads
        q = self.split_heads(x @ self.wq)                                    # (B, H, T, D)
        k = self.split_heads(x @ self.wk)
        v = self.split_heads(x @ self.wv)
        qn = self.rms_norm(q, self.gamma_q)                                  # [q-norm]
        kn = self.rms_norm(k, self.gamma_k)                                  # [k-norm]
        scores = qn @ kn.transpose(-2, -1) / D ** 0.5                        # (B, H, T, T) [scores]
        future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1) & self.causal
        scores = scores.masked_fill(future, float("-inf"))
        attn = torch.softmax(scores, dim=-1)                                 # over the keys
        return self.merge_heads(attn @ v) @ self.wo
