"""Practice: GroupNorm in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.GroupNorm,
for input (N, C, *spatial). Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 2 to 4, G = 1, G = C, float32, a constant
group, tiny variances) and compares its output, and the gradients autograd gets through your
forward, with normcore.GroupNorm; it checks the module itself against torch.nn.GroupNorm
(parameters, buffers and state_dict keys; the input left unchanged) and, when a check fails,
names the well-known mistake that produces exactly your numbers. Write it from tensor
operations: no normcore, and not torch.nn.functional.group_norm.

A worked example, to 4 decimals (torch.nn.GroupNorm gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> gn = GroupNorm(2, 4)
    >>> list(gn.state_dict())
    ['weight', 'bias']
    >>> with torch.no_grad():
    ...     _ = gn.weight.copy_(torch.tensor([1.0, 2.0, 0.5, 1.0]))
    ...     _ = gn.bias.copy_(torch.tensor([0.0, 0.1, -0.2, 0.0]))
    >>> x = torch.tensor([[[1.0, 2.0], [4.0, 0.0], [0.0, 3.0], [1.0, -1.0]]], requires_grad=True)
    >>> y = gn(x)
    >>> y.detach().round(decimals=4).tolist()
    [[[-0.5071, 0.169], [3.1425, -2.2664], [-0.4535, 0.5606], [0.169, -1.1832]]]
    >>> y.backward(torch.tensor([[[1.0, 0.0], [-1.0, 0.5], [-0.5, 2.0], [0.0, 1.0]]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[[0.2705, 0.1352], [-0.1352, -0.2704], [-0.425, 0.2608], [-0.3091, 0.4733]]]
    >>> gn.weight.grad.round(decimals=4).tolist(), gn.bias.grad.round(decimals=4).tolist()
    ([-0.5071, -2.1129, 3.2961, -1.1832], [1.0, -0.5, 1.5, 1.0])
"""

import torch
from torch import nn


class GroupNorm(nn.Module):
    """Group normalisation: each sample's groups of C / G channels standardised together.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (N, C, *spatial); y has x's shape and dtype.
    - ``self.weight``, ``self.bias``: nn.Parameters of shape (C,) (PyTorch's names).
    - the same in training and in evaluation.

    Semantics are PyTorch's: which channels form a group, which variance, where eps goes. If
    you are unsure, decide, and let the grader tell you.
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(num_channels)) if affine else None
        self.bias = nn.Parameter(torch.zeros(num_channels)) if affine else None

    def forward(self, x):
        # TODO: view x as (N, G, everything else of the group), standardise over the last dim,
        #       back to x's shape, then weight and bias per channel.
        raise NotImplementedError("TODO: GroupNorm.forward")
