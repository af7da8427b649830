"""DyT (Dynamic Tanh) as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). DyT replaces a norm layer by y = weight * tanh(alpha * x) + bias,
alpha one learnable scalar (shape (1,)), weight and bias of shape normalized_shape.

A name in brackets at the end of a line, such as ``[alpha]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class DyT(nn.Module):
    """y = weight * tanh(alpha * x) + bias; input (*, *normalized_shape)."""

    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))  # [alpha]
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias  # [y]
