"""Meta's LLaMA RMSNorm, ported to the rmsnorm exercise (PyTorch track).

Source: github.com/meta-llama/llama, llama/model.py, class RMSNorm (the LLaMA 1/2 inference
code, 2023): ``self._norm(x.float()).type_as(x) * self.weight`` with
``x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)``.
Port: the constructor takes the skeleton's (normalized_shape, eps=None, elementwise_affine)
instead of (dim, eps=1e-6); the mean is over the normalized dims (LLaMA's -1 for its one int
dim); eps=None becomes the machine epsilon PyTorch uses (float32's for half input, the
input's otherwise), since LLaMA has no None. Kept: the norm computed on x.float(), cast back
with type_as before the weight, the weight multiplied in the input's dtype.
"""
import torch
from torch import nn


class RMSNorm(torch.nn.Module):
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
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
        output = self._norm(x.float(), eps).type_as(x)
        return output * self.weight
