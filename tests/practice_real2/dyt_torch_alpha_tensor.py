# DyT module; alpha kept as a plain tensor attribute (the paper's pseudo-code reads
# alpha as a scalar), weight and bias as nn.Parameters.
import torch
from torch import nn


class DyT(nn.Module):
    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.alpha = torch.full((1,), float(alpha_init), requires_grad=True)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        return self.weight * torch.tanh(self.alpha * x) + self.bias
