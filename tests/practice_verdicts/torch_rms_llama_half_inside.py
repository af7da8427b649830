"""LLaMA's RMSNorm with x.half() where x.float() belongs: float16 inside, about 1e-3 off,
far more than float32's rounding. Must fail, with no mistake named."""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))

    def _norm(self, x, eps):
        dims = tuple(range(-len(self.normalized_shape), 0))
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)

    def forward(self, x):
        eps = self.eps
        if eps is None:
            eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
        output = self._norm(x.half().float(), eps).type_as(x)
        return output * self.weight
