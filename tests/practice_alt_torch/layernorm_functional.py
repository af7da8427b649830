"""A correct LayerNorm in another style: a functional helper, x.pow(2).mean and torch.rsqrt."""

import torch
from torch import nn


def layer_norm(x, weight, bias, n_dims, eps):
    dims = list(range(x.dim() - n_dims, x.dim()))
    centred = x - x.mean(dim=dims, keepdim=True)
    return centred * torch.rsqrt(centred.pow(2).mean(dim=dims, keepdim=True) + eps) * weight + bias


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(shape))
        self.bias = nn.Parameter(torch.zeros(shape))

    def forward(self, x):
        return layer_norm(x, self.weight, self.bias, self.weight.dim(), self.eps)
