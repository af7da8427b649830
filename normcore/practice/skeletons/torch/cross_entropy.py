"""Practice: CrossEntropyLoss in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like
torch.nn.CrossEntropyLoss() (mean reduction): logits (N, C), integer targets (N,). Autograd
does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (several shapes, float32, logits around 1000,
confident and wrong predictions) and compares its output, and the gradients autograd gets
through your forward, with normcore.CrossEntropyLoss; it checks the module itself against
torch.nn.CrossEntropyLoss (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not
torch.nn.functional.cross_entropy (or log_softmax).

A worked example, to 4 decimals (torch.nn.CrossEntropyLoss gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> logits = torch.tensor([[1.0, 2.0, 4.0], [0.5, 0.0, -1.0]], requires_grad=True)
    >>> loss = CrossEntropyLoss()(logits, torch.tensor([2, 1]))
    >>> round(loss.item(), 4)
    0.637
    >>> loss.backward()
    >>> logits.grad.round(decimals=4).tolist()
    [[0.021, 0.0571, -0.0781], [0.2733, -0.3343, 0.061]]
"""

import torch
from torch import nn


class CrossEntropyLoss(nn.Module):
    """Cross-entropy of logits against integer targets, averaged over the batch.

    The contract the grader relies on (keep these names):

    - ``forward(logits, targets) -> loss``: logits (N, C), targets (N,) of class indices
      (int64); the loss a 0-dim tensor, the mean over the N samples.
    - no parameters.

    Semantics are PyTorch's; a confident wrong prediction must give a finite loss. If you
    are unsure, decide, and let the grader tell you.
    """

    def forward(self, logits, targets):
        # TODO: log-softmax of each row (stable), the target's entry, the mean over rows.
        raise NotImplementedError("TODO: CrossEntropyLoss.forward")
