"""BatchNorm1d whose running statistics are re-assigned from the batch statistics, with their
autograd history (no torch.no_grad(), no .detach())."""

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
        self.register_buffer("num_batches_tracked", torch.tensor(0))

    def forward(self, x):
        dims = [0] + list(range(2, x.dim()))
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            mean = x.mean(dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dims, keepdim=True)
            n = x.numel() / x.shape[1]
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked.item() if self.momentum is None else self.momentum
            self.running_mean = (1 - m) * self.running_mean + m * mean.flatten()
            self.running_var = (1 - m) * self.running_var + m * var.flatten() * n / (n - 1)
        else:
            mean, var = self.running_mean.view(shape), self.running_var.view(shape)
        x_hat = (x - mean) / torch.sqrt(var + self.eps)
        return x_hat * self.weight.view(shape) + self.bias.view(shape)
