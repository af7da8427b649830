"""SyncBatchNorm written for torch.distributed's in-place all_reduce: the returned sums are
dropped, so every worker normalises with its own shard's statistics."""

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
        stats = torch.cat([x.new_tensor([x.shape[0]]), x.sum(dim=0)])
        self.group.all_reduce(stats)  # torch.distributed style: the sum is returned, not written
        n, mean = stats[0], stats[1:] / stats[0]
        sq = ((x - mean) ** 2).sum(dim=0)
        self.group.all_reduce(sq)
        var = sq / n
        with torch.no_grad():
            m = self.momentum
            self.running_mean.mul_(1 - m).add_(m * mean)
            self.running_var.mul_(1 - m).add_(m * var * n / (n - 1))
            self.num_batches_tracked += 1
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
