"""x-transformers' RMSNorm (F.normalize times sqrt(dim), no eps), ported to the rmsnorm
exercise (PyTorch track).

Source: github.com/lucidrains/x-transformers, x_transformers/x_transformers.py, class
RMSNorm(dim, unit_offset=False): ``self.scale = dim ** 0.5``, ``self.g`` initialised to 1 -
unit_offset, ``forward: gamma = self.g + float(self.unit_offset); return F.normalize(x, dim
= -1) * self.scale * gamma``. F.normalize divides by max(||x||_2, 1e-12): there is no eps
under the root, the constructor has none.
Port: (normalized_shape, eps=None, elementwise_affine) instead of (dim, unit_offset); g
renamed weight; several normalized dims flattened into one for F.normalize; the eps argument
is accepted and, as in the source, not used.
"""
import torch
from torch import nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, unit_offset=False):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        dim = 1
        for n in self.normalized_shape:
            dim *= n
        self.unit_offset = unit_offset
        self.scale = dim ** 0.5

        self.weight = nn.Parameter(torch.zeros(self.normalized_shape))
        nn.init.constant_(self.weight, 1. - float(unit_offset))

    def forward(self, x):
        gamma = self.weight + float(self.unit_offset)
        flat = x.flatten(-len(self.normalized_shape)) if len(self.normalized_shape) > 1 else x
        normed = F.normalize(flat, dim=-1).view_as(x)
        return normed * self.scale * gamma
