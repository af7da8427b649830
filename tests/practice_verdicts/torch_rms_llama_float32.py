"""Meta's LLaMA RMSNorm (llama/model.py), as published: ``output = self._norm(x.float())
.type_as(x); return output * self.weight``, with the skeleton's normalized_shape and its
eps=None (the machine epsilon of the dtype computed in, float32's for float16)."""

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
        output = self._norm(x.float(), eps).type_as(x)
        return output * self.weight
