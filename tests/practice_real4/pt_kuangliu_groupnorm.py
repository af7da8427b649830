"""The widely copied PyTorch GroupNorm of kuangliu/pytorch-groupnorm, ported to the groupnorm
exercise (PyTorch track).

Source: github.com/kuangliu/pytorch-groupnorm, groupnorm.py, class GroupNorm(num_features,
num_groups=32, eps=1e-5) (copied into many repositories; the form with weight.view((1, C, 1,
1)) keeps the weight of shape (C,)): ``x = x.view(N,G,-1); mean = x.mean(-1, keepdim=True);
var = x.var(-1, keepdim=True); x = (x-mean) / (var+self.eps).sqrt()``. x.var uses torch's
default correction (n - 1).
Port: the skeleton's (num_groups, num_channels, eps, affine) order instead of
(num_features, num_groups, eps); (N, C, H, W) generalised to (N, C, *spatial) (``x.view(N,
C, H, W)`` becomes ``x.view(shape)``).
"""
import torch
import torch.nn as nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super(GroupNorm, self).__init__()
        self.num_features = num_channels
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))
        self.num_groups = num_groups
        self.eps = eps

    def forward(self, x):
        shape = x.size()
        N, C = shape[:2]
        G = self.num_groups
        assert C % G == 0

        x = x.view(N, G, -1)
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True)

        x = (x - mean) / (var + self.eps).sqrt()
        x = x.view(shape)
        view = (1, self.num_features) + (1,) * (len(shape) - 2)
        return x * self.weight.view(view) + self.bias.view(view)
