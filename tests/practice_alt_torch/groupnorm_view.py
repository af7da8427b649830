"""A correct GroupNorm in another style: view, torch.var_mean, einsum-free broadcasting."""

import torch
from torch import nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5):
        super().__init__()
        self.g, self.eps = num_groups, eps
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        groups = x.reshape(x.shape[0], self.g, -1)
        var, mean = torch.var_mean(groups, dim=2, unbiased=False, keepdim=True)
        y = ((groups - mean) / torch.sqrt(var + self.eps)).view_as(x)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        return y * self.weight.view(shape) + self.bias.view(shape)
