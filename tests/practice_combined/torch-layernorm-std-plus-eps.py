"""A LayerNorm module as often written in interviews: x.std with its default correction, and
eps added to the std (two mistakes: torch-var-unbiased and eps-outside-sqrt)."""

import torch
from torch import nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(shape))
        self.bias = nn.Parameter(torch.zeros(shape))

    def forward(self, x):
        dims = tuple(range(-self.weight.dim(), 0))
        mean = x.mean(dims, keepdim=True)
        std = x.std(dims, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias
