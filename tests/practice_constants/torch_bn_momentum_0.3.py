"""A PyTorch BatchNorm1d whose running update uses a momentum of 0.3 written as a number."""

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
            mean = x.mean(dim=dims, keepdim=True)
            var = x.var(dim=dims, unbiased=False, keepdim=True)
            self.num_batches_tracked += 1
            with torch.no_grad():
                n = x.numel() // x.shape[1]
                self.running_mean.mul_(0.7).add_(0.3 * mean.flatten())
                self.running_var.mul_(0.7).add_(0.3 * var.flatten() * n / (n - 1))
        else:
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        y = (x - mean) / torch.sqrt(var + self.eps)
        return y * self.weight.view(shape) + self.bias.view(shape)
