"""LayerNorm as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch.nn.LayerNorm: each sample is standardised over its
last len(normalized_shape) dims with the biased variance, eps inside the square root; the
parameters are ``weight`` and ``bias``. Autograd computes every gradient.

A name in brackets at the end of a line, such as ``[dims]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class LayerNorm(nn.Module):
    """Layer normalisation over the last dims D (the normalized_shape); input (*, D).

        mean  = mean_D(x),  var = mean_D((x - mean)**2)      (*, 1)   biased
        x_hat = (x - mean) / sqrt(var + eps)                 (*, D)
        y     = weight * x_hat + bias                        weight, bias: D

    Training and evaluation are the same.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        affine = elementwise_affine
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if affine else None  # [weight]
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape)) if affine and bias else None  # [bias]

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))             # the normalised dims D [dims]
        mean = x.mean(dim=dims, keepdim=True)                           # (*, 1) [mean]
        var = x.var(dim=dims, unbiased=False, keepdim=True)             # (*, 1) biased [var]
        y = (x - mean) / torch.sqrt(var + self.eps)                     # (*, D) x_hat [x-hat]
        if self.weight is not None:
            y = y * self.weight                                         # [scale]
        if self.bias is not None:
            y = y + self.bias
        return y
