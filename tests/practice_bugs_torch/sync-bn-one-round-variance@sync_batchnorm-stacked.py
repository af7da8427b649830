"""SyncBatchNorm with one round of [n, sum x, sum x**2]: var = E[x**2] - E[x]**2."""

import torch
from torch import nn


class SyncBatchNorm(nn.Module):
    def __init__(self, num_features, process_group=None, eps=1e-5, momentum=0.1):
        super().__init__()
        self.group, self.eps, self.momentum = process_group, eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        if not self.training:
            return (x - self.running_mean) / torch.sqrt(self.running_var + self.eps) * self.weight + self.bias
        c = x.shape[1]
        sums = torch.cat([x.new_full((1,), x.shape[0]), x.sum(0), (x * x).sum(0)])
        total = self.group.all_reduce(sums)
        n = total[0]
        mean = total[1:1 + c] / n
        var = total[1 + c:] / n - mean * mean
        with torch.no_grad():
            self.running_mean.lerp_(mean, self.momentum)
            self.running_var.lerp_(var * n / (n - 1), self.momentum)
            self.num_batches_tracked += 1
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
