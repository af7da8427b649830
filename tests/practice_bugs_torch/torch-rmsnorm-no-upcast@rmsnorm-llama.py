"""LLaMA's RMSNorm without its .float(): the mean square of a float16 input in float16."""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=None):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        axes = tuple(range(-self.weight.dim(), 0))
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(axes, keepdim=True) + eps))
