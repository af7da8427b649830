"""WeightNorm with g a vector (out,), unsqueezed in the forward: right numbers, not torch's
parameters (its state dict would not load torch's)."""

import torch
from torch import nn


class WeightNormLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight_g = nn.Parameter(torch.ones(out_features))
        self.weight_v = nn.Parameter(torch.randn(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        v = self.weight_v
        w = self.weight_g.unsqueeze(1) * v / (v * v).sum(dim=1, keepdim=True).sqrt()
        return x @ w.T + self.bias
