# BatchNorm1d as an nn.Module: biased variance to normalise, unbiased for the running
# estimate, buffers updated under no_grad, momentum=None as a cumulative average.
import torch
from torch import nn


class BatchNorm1d(nn.Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.track_running_stats = track_running_stats
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        dims = [0] if x.dim() == 2 else [0, 2]
        shape = [1, -1] + [1] * (x.dim() - 2)
        if self.training:
            mean = x.mean(dim=dims)
            var = x.var(dim=dims, unbiased=False)
            with torch.no_grad():
                self.num_batches_tracked += 1
                m = self.momentum if self.momentum is not None else 1.0 / float(self.num_batches_tracked)
                n = x.numel() / x.size(1)
                self.running_mean.mul_(1 - m).add_(mean, alpha=m)
                self.running_var.mul_(1 - m).add_(var * n / (n - 1), alpha=m)
        else:
            mean, var = self.running_mean, self.running_var
        x_hat = (x - mean.view(shape)) * torch.rsqrt(var.view(shape) + self.eps)
        return x_hat * self.weight.view(shape) + self.bias.view(shape)
