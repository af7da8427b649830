# BatchNorm1d module; the running statistics are blended with the batch's own tensors
# (no no_grad, no detach), everything else as PyTorch does it.
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
        dims = (0,) if x.dim() == 2 else (0, 2)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        if self.training:
            mean = x.mean(dims)
            var = x.var(dims, correction=0)
            n = x.numel() // x.shape[1]
            self.num_batches_tracked += 1
            m = self.momentum if self.momentum is not None else 1.0 / self.num_batches_tracked.item()
            self.running_mean = (1 - m) * self.running_mean + m * mean
            self.running_var = (1 - m) * self.running_var + m * var * n / (n - 1)
        else:
            mean, var = self.running_mean, self.running_var
        return (x - mean.reshape(shape)) / torch.sqrt(var.reshape(shape) + self.eps) \
            * self.weight.reshape(shape) + self.bias.reshape(shape)
