"""WeightNormLinear with torch.linalg.vector_norm and torch.nn.functional.linear, g kept as
(out, 1)."""

import torch
import torch.nn.functional as F
from torch import nn


class WeightNormLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        w = torch.randn(out_features, in_features)
        self.weight_v = nn.Parameter(w.clone())
        self.weight_g = nn.Parameter(torch.linalg.vector_norm(w, dim=1, keepdim=True))
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        direction = self.weight_v / torch.linalg.vector_norm(self.weight_v, dim=1, keepdim=True)
        return F.linear(x, self.weight_g * direction, self.bias)
