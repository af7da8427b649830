"""PyTorch RMSNorm: computed in float32 for float16 input (upcast), torch.rsqrt, cast back at the end."""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight.to(y.dtype)
        return y.to(x.dtype)
