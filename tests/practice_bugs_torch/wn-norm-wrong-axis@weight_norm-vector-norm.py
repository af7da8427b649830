"""WeightNorm whose norm runs down the columns: torch.linalg.vector_norm over dim 0."""

import torch
import torch.nn.functional as F
from torch import nn


class WeightNormLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight_g = nn.Parameter(torch.ones(out_features, 1))
        self.weight_v = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        v = self.weight_v
        return F.linear(x, self.weight_g * v / torch.linalg.vector_norm(v, dim=0, keepdim=True), self.bias)
