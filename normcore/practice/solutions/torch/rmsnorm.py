"""RMSNorm as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch.nn.RMSNorm: y = x / sqrt(mean(x**2) + eps) * weight
over the last len(normalized_shape) dims, no centring and no bias; eps=None means the machine
epsilon of the dtype it is computed in (float32's for a float16 input). As in LLaMA's RMSNorm,
a float16 (or bfloat16) input is computed in float32 and the result cast back: x**2 overflows
float16 as soon as |x| > 256.

A name in brackets at the end of a line, such as ``[dims]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class RMSNorm(nn.Module):
    """Root-mean-square normalisation over the last dims D; input (*, D).

        ms = mean_D(x**2)                        (*, 1)   in float32 at least
        y  = weight * x / sqrt(ms + eps)         (*, D)   back in the input's dtype
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None  # [weight]

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))             # the normalised dims D [dims]
        h = x.to(torch.promote_types(x.dtype, torch.float32))           # float16 -> float32 [upcast]
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps  # float32's for float16 [eps]
        ms = h.pow(2).mean(dim=dims, keepdim=True)                      # (*, 1) [mean-square]
        y = (h * torch.rsqrt(ms + eps)).to(x.dtype)                     # (*, D) x_hat [rrms]
        if self.weight is not None:
            y = y * self.weight
        return y
