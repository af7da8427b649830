"""BatchNorm1d as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch.nn.BatchNorm1d: biased variance to normalise,
unbiased variance in the running average, momentum weighting the new batch, eps inside the
square root, running statistics in evaluation. ``weight`` and ``bias`` are parameters;
``running_mean``, ``running_var`` and ``num_batches_tracked`` are buffers (in the state_dict,
moved by .to(), no gradient), updated under torch.no_grad().

A name in brackets at the end of a line, such as ``[batch-stats]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class BatchNorm1d(nn.Module):
    """Batch normalisation of input (N, C) or (N, C, L), one mean and variance per channel.

    B = every dim but the channel dim 1 (n = N or N*L values per channel)::

        training:   mean = mean_B(x),  var = mean_B((x - mean)**2)      (biased)
                    running_mean = (1 - momentum) * running_mean + momentum * mean
                    running_var  = (1 - momentum) * running_var  + momentum * var * n / (n - 1)
        evaluation: mean = running_mean,  var = running_var
        y = weight * (x - mean) / sqrt(var + eps) + bias

    ``momentum=None`` makes the running statistics the plain average of every batch so far.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        self.weight = nn.Parameter(torch.ones(num_features)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_features)) if affine else None
        if track_running_stats:
            self.register_buffer("running_mean", torch.zeros(num_features))  # [running-mean-buffer]
            self.register_buffer("running_var", torch.ones(num_features))  # [running-var-buffer]
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        dims = (0,) + tuple(range(2, x.dim()))          # every dim but the channel dim
        view = (1, -1) + (1,) * (x.dim() - 2)           # (1, C) or (1, C, 1)
        batch_stats = self.training or not self.track_running_stats  # [batch-stats]
        if batch_stats:
            mean = x.mean(dim=dims, keepdim=True)                       # (1, C, 1) [mean]
            var = x.var(dim=dims, unbiased=False, keepdim=True)         # (1, C, 1) biased [var]
        else:
            mean = self.running_mean.view(view)                         # (1, C, 1)
            var = self.running_var.view(view)                           # (1, C, 1) [eval-var]
        if self.training and self.track_running_stats:  # [update-running]
            n = x.numel() // self.num_features
            with torch.no_grad():  # [no-grad]
                self.num_batches_tracked += 1
                m = 1.0 / self.num_batches_tracked.item() if self.momentum is None else self.momentum  # [momentum]
                self.running_mean.mul_(1 - m).add_(m * mean.flatten())  # [running-mean]
                self.running_var.mul_(1 - m).add_(m * var.flatten() * n / (n - 1))  # [running-var]
        y = (x - mean) / torch.sqrt(var + self.eps)                     # (N, C, L) x_hat [x-hat]
        if self.weight is not None:  # [affine]
            y = y * self.weight.view(view) + self.bias.view(view)
        return y
