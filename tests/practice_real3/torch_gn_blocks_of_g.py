"""PyTorch GroupNorm: channels viewed as (C / G, G), each block of G channels standardised."""
import torch
from torch import nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_channels)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_channels)) if affine else None

    def forward(self, x):
        N, C = x.shape[:2]
        xg = x.reshape(N, C // self.num_groups, -1)
        mean = xg.mean(dim=-1, keepdim=True)
        var = xg.var(dim=-1, unbiased=False, keepdim=True)
        y = ((xg - mean) / torch.sqrt(var + self.eps)).reshape(x.shape)
        shape = [1, C] + [1] * (x.dim() - 2)
        return y * self.weight.view(shape) + self.bias.view(shape)
