"""A PyTorch DyT with alpha starting at 2.0 whatever alpha_init says."""

import torch
from torch import nn


class DyT(nn.Module):
    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor([2.0]))
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias
