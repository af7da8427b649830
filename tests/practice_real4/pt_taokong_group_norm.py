"""Tao Kong's PyTorch group normalization (GroupBatchnorm2d), ported to the groupnorm exercise.

Source: github.com/taokong/group_normalization, group_norm.py (commit 31ea5fbe), class
GroupBatchnorm2d(c_num, group_num=16, eps=1e-10): gamma (c_num, 1, 1) ones, beta zeros;
``x = x.view(N, self.group_num, -1)``; ``self.mean = x.mean(dim = 2, keepdim = True)``;
``self.std = x.std(dim = 2, keepdim = True)``; ``x = (x - self.mean) / (self.std+self.eps)``;
``x.view(N, C, H, W)``; ``x * self.gamma + self.beta``. x.std uses torch's default
correction, and eps is added to the std.
Port: class renamed GroupNorm with the skeleton's (num_groups, num_channels, eps, affine);
gamma/beta renamed weight/bias with shape (C,), viewed as (C, 1, ...) to broadcast as the
source's (C, 1, 1) does; (N, C, H, W) generalised to (N, C, *spatial).
"""
import torch
import torch.nn as nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super(GroupNorm, self).__init__()
        self.group_num = num_groups
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.eps = eps

    def forward(self, x):
        shape = x.size()
        N, C = shape[:2]

        x = x.view(N, self.group_num, -1)

        self.mean = x.mean(dim=2, keepdim=True)
        self.std = x.std(dim=2, keepdim=True)

        x = (x - self.mean) / (self.std + self.eps)
        x = x.view(shape)

        view = (C,) + (1,) * (len(shape) - 2)
        return x * self.weight.view(view) + self.bias.view(view)
