"""PyTorch DyT with F.hardtanh in place of tanh."""
import torch
import torch.nn.functional as F
from torch import nn


class DyT(nn.Module):
    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return self.weight * F.hardtanh(self.alpha * x) + self.bias
