"""GroupNorm in torch with the groups' std from torch.std (n - 1) and eps added to it
(torch-var-unbiased and eps-outside-sqrt)."""

import torch
import torch.nn as nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.G, self.eps = num_groups, eps
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        N, C = x.shape[:2]
        xg = x.view(N, self.G, -1)
        mu = xg.mean(-1, keepdim=True)
        sigma = xg.std(-1, keepdim=True)
        xg = (xg - mu) / (sigma + self.eps)
        shape = [1, C] + [1] * (x.dim() - 2)
        return xg.view_as(x) * self.weight.view(shape) + self.bias.view(shape)
