"""Qwen3's attention softmax (transformers/models/qwen3/modeling_qwen3.py,
eager_attention_forward): ``softmax(attn_weights, dim=-1, dtype=torch.float32)
.to(query.dtype)``, written from tensor operations as the skeleton asks."""

import torch
from torch import nn


class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        h = x.to(torch.float32)
        e = torch.exp(h - h.amax(dim=self.dim, keepdim=True))
        return (e / e.sum(dim=self.dim, keepdim=True)).to(x.dtype)
