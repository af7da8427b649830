"""A correct BatchNorm1d in another style: torch.var_mean, the running update from detached
statistics with torch.lerp, the unbiased variance from torch.var(correction=1)."""

import torch
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            var, mean = torch.var_mean(x, dim=dims, correction=0, keepdim=True)
            self.num_batches_tracked += 1
            m = 1 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            unbiased = torch.var(x.detach(), dim=dims, correction=1)
            self.running_mean.lerp_(mean.detach().reshape(-1), m)
            self.running_var.lerp_(unbiased, m)
        else:
            mean, var = self.running_mean.reshape(shape), self.running_var.reshape(shape)
        return (x - mean) / (var + self.eps).sqrt() * self.weight.reshape(shape) + self.bias.reshape(shape)
