"""Practice: Dropout in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.Dropout:
inverted dropout in training, the identity in evaluation. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (the fraction dropped, the scale of the kept
units, eval mode, float32, p = 0 and p = 1, a seed) and compares its output, and the
gradients autograd gets through your forward, with normcore.Dropout; it checks the module
itself against torch.nn.Dropout (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not torch.nn.functional.dropout.

A worked example, to 4 decimals (torch.nn.Dropout gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> _ = torch.manual_seed(0)
    >>> drop = Dropout(0.5)
    >>> y = drop(torch.ones(1000))
    >>> sorted(set(y.tolist()))  # dropped, or kept and scaled
    [0.0, 2.0]
    >>> round((y == 0).double().mean().item(), 1)  # about p
    0.5
    >>> _ = drop.eval()
    >>> drop(torch.ones(4)).tolist()
    [1.0, 1.0, 1.0, 1.0]
"""

import torch
from torch import nn


class Dropout(nn.Module):
    """Dropout: zero each unit with probability p in training.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: any shape; y has x's shape and dtype.
    - ``self.p``: the probability of dropping a unit; the mask comes from torch's generator
      (torch.rand_like or torch.bernoulli), so that torch.manual_seed makes it repeatable.
    - ``train()`` / ``eval()`` (nn.Module's).

    Semantics are PyTorch's: what p is, and when the kept units are scaled. If you are
    unsure, decide, and let the grader tell you.
    """

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        # TODO: in evaluation, the input; in training, a random mask and a scale.
        raise NotImplementedError("TODO: Dropout.forward")
