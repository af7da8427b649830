# 手撕 GroupNorm（PyTorch 版，只写前向，反向交给 autograd）
import torch
from torch import nn


class GroupNorm(nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_channels))
        self.bias = nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        N, C = x.shape[:2]
        xg = x.reshape(N, self.num_groups, -1)                 # 每组：连续的 C/G 个通道
        mean = xg.mean(dim=-1, keepdim=True)
        var = xg.var(dim=-1, keepdim=True, unbiased=False)     # 有偏方差
        xg = (xg - mean) / torch.sqrt(var + self.eps)
        x = xg.reshape(x.shape)
        shape = (1, C) + (1,) * (x.dim() - 2)
        return x * self.weight.view(shape) + self.bias.view(shape)
