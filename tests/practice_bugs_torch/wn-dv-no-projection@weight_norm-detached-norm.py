"""WeightNorm whose norm is detached, as if ||v|| were a constant: autograd's dv then lacks
the projection term."""

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
        norm = self.weight_v.norm(dim=1, keepdim=True).detach()
        return F.linear(x, self.weight_g * self.weight_v / norm, self.bias)
