"""A correct RMSNorm as LLaMA writes it: .float(), torch.rsqrt, .type_as back, then the weight."""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=None):
        super().__init__()
        self.axes = (-1,) if isinstance(dim, int) else tuple(range(-len(dim), 0))
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        h = h * torch.rsqrt(h.pow(2).mean(self.axes, keepdim=True) + eps)
        return self.weight * h.type_as(x)
