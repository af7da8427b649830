"""Gemma's RMSNorm (scale 1 + weight, weight initialised to zeros), ported to the rmsnorm
exercise (PyTorch track).

Source: github.com/huggingface/transformers, src/transformers/models/gemma/modeling_gemma.py,
class GemmaRMSNorm (same design as google/gemma_pytorch gemma/model.py RMSNorm with
add_unit_offset=True): ``output = self._norm(x.float()); output = output * (1.0 +
self.weight.float()); return output.type_as(x)``; "Llama does x.to(float16) * w whilst Gemma
is (x * w).to(float16)".
Port: (normalized_shape, eps=None, elementwise_affine) instead of (dim, eps=1e-6); the mean
over the normalized dims; eps=None as PyTorch's machine epsilon. Kept: weight stored as an
offset from 1 (zeros at init), float32 inside.
"""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(self.normalized_shape))

    def _norm(self, x, eps):
        dims = tuple(range(-len(self.normalized_shape), 0))
        return x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)

    def forward(self, x):
        eps = self.eps
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
        output = self._norm(x.float(), eps)
        # Llama does x.to(float16) * w whilst Gemma is (x * w).to(float16)
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)
