"""GroupNorm as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch.nn.GroupNorm: the C channels are split into
num_groups groups of C / G contiguous channels, and each sample's group is standardised over
its channels and spatial positions together (biased variance, eps inside the square root);
``weight`` and ``bias`` are per channel.

A name in brackets at the end of a line, such as ``[group]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class GroupNorm(nn.Module):
    """Group normalisation of input (N, C, *spatial), G = num_groups.

        g     = x as (N, G, C / G * spatial)
        x_hat = (g - mean(g)) / sqrt(var(g) + eps)   over the last dim, biased
        y     = weight * x_hat + bias                weight, bias: C, broadcast per channel
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_channels)) if affine else None  # [weight]
        self.bias = nn.Parameter(torch.zeros(num_channels)) if affine else None  # [bias]

    def forward(self, x):
        n = x.shape[0]
        g = x.reshape(n, self.num_groups, -1)                           # (N, G, K) [group]
        mean = g.mean(dim=-1, keepdim=True)                             # (N, G, 1) [mean]
        var = g.var(dim=-1, unbiased=False, keepdim=True)               # (N, G, 1) biased [var]
        g = (g - mean) / torch.sqrt(var + self.eps)                     # (N, G, K) [x-hat]
        y = g.reshape(x.shape)                                          # (N, C, *spatial) [ungroup]
        if self.weight is not None:
            view = (1, -1) + (1,) * (x.dim() - 2)
            y = y * self.weight.view(view) + self.bias.view(view)
        return y
