"""Practice: BatchNorm1d in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like
torch.nn.BatchNorm1d, for input (N, C) and (N, C, L), in training and in evaluation.
Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (several shapes, float32, a batch of 2, a
constant channel, running statistics over several steps, eval mode) and compares its output,
and the gradients autograd gets through your forward, with normcore.BatchNorm1d; it checks
the module itself against torch.nn.BatchNorm1d (parameters, buffers and state_dict keys; the
input left unchanged) and, when a check fails, names the well-known mistake that produces
exactly your numbers. Write it from tensor operations: no normcore, and not
torch.nn.functional.batch_norm.

A worked example, to 4 decimals (torch.nn.BatchNorm1d gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> bn = BatchNorm1d(2, momentum=0.1)
    >>> list(bn.state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    >>> with torch.no_grad():
    ...     _ = bn.weight.copy_(torch.tensor([1.0, 2.0]))
    ...     _ = bn.bias.copy_(torch.tensor([0.0, -1.0]))
    >>> x = torch.tensor([[1.0, 2.0], [3.5, 0.0], [2.0, 4.0], [6.0, 2.0]], requires_grad=True)
    >>> y = bn(x)
    >>> y.detach().round(decimals=4).tolist()
    [[-1.1283, -1.0], [0.1991, -3.8284], [-0.5974, 1.8284], [1.5266, -1.0]]
    >>> bn.running_mean.round(decimals=4).tolist(), bn.running_var.round(decimals=4).tolist()
    ([0.3125, 0.2], [1.3729, 1.1667])
    >>> bn.num_batches_tracked.item()
    1
    >>> y.backward(torch.tensor([[1.0, 0.5], [0.0, -1.0], [-1.0, 2.0], [0.5, 0.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[0.4994, 0.1768], [-0.0725, 0.1768], [-0.5789, 0.1768], [0.152, -0.5303]]
    >>> bn.weight.grad.round(decimals=4).tolist(), bn.bias.grad.round(decimals=4).tolist()
    ([0.2323, 4.2426], [0.5, 1.5])
    >>> _ = bn.eval()
    >>> bn(x[:1]).detach().round(decimals=4).tolist()
    [[0.5867, 2.3329]]
"""

import torch
from torch import nn


class BatchNorm1d(nn.Module):
    """Batch normalisation of (N, C) or (N, C, L): one mean and variance per channel.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (N, C) or (N, C, L); y has x's shape and dtype.
    - ``self.weight``, ``self.bias``: nn.Parameters of shape (C,); ``running_mean``,
      ``running_var``, ``num_batches_tracked``: buffers (registered, as PyTorch's are).
    - ``train()`` / ``eval()`` (nn.Module's): batch statistics, or the running ones.

    Semantics are PyTorch's: which variance where, what momentum weights, where eps goes. If
    you are unsure, decide, and let the grader tell you.
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
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))
            self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        # TODO: statistics over every dim but the channel dim (in training), or the running ones.
        # TODO: in training, update the buffers (how, so that autograd does not follow?).
        # TODO: x_hat, then weight and bias, broadcast per channel.
        raise NotImplementedError("TODO: BatchNorm1d.forward")
