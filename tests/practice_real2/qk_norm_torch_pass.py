# QK-norm self-attention module: RMSNorm on every head's q and k (eps the dtype's machine
# epsilon, computed in float32 at least), the 1/sqrt(D) scale after the norm.
import torch
from torch import nn


def rms_norm(t, weight):
    t32 = t if t.dtype == torch.float64 else t.float()
    eps = torch.finfo(t.dtype).eps
    out = t32 * torch.rsqrt(t32.pow(2).mean(-1, keepdim=True) + eps)
    return out.to(t.dtype) * weight


class QKNormSelfAttention(nn.Module):
    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        assert d_model % n_heads == 0
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.gamma_q = nn.Parameter(torch.ones(d_model // n_heads))
        self.gamma_k = nn.Parameter(torch.ones(d_model // n_heads))

    def forward(self, x):
        B, T, C = x.shape
        H, D = self.n_heads, C // self.n_heads

        def split(t):
            return t.reshape(B, T, H, D).permute(0, 2, 1, 3)

        q = rms_norm(split(x @ self.wq), self.gamma_q)
        k = rms_norm(split(x @ self.wk), self.gamma_k)
        v = split(x @ self.wv)
        s = (q @ k.transpose(-1, -2)) / D ** 0.5
        if self.causal:
            s = s.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        s = s - s.amax(-1, keepdim=True).detach()
        p = s.exp()
        p = p / p.sum(-1, keepdim=True)
        out = (p @ v).permute(0, 2, 1, 3).reshape(B, T, C)
        return out @ self.wo
