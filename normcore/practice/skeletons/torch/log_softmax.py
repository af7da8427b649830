"""Practice: LogSoftmax in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.LogSoftmax
along ``dim``, for any shape and any dim. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 1 to 3, every dim, float32, logits around
1000, a logit 800 below the rest) and compares its output, and the gradients autograd gets
through your forward, with normcore.LogSoftmax; it checks the module itself against
torch.nn.LogSoftmax (parameters, buffers and state_dict keys; the input left unchanged) and,
when a check fails, names the well-known mistake that produces exactly your numbers. Write
it from tensor operations: no normcore, and not torch.log_softmax or
torch.nn.functional.log_softmax.

A worked example, to 4 decimals (torch.nn.LogSoftmax gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, -800.0]], requires_grad=True)
    >>> y = LogSoftmax(dim=-1)(x)
    >>> y.detach().round(decimals=4).tolist()
    [[-3.1698, -2.1698, -0.1698], [-0.6931, -0.6931, -800.6931]]
    >>> y.backward(torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[1.0, 0.0, -1.0], [-0.5, -1.5, 2.0]]
"""

import torch
from torch import nn


class LogSoftmax(nn.Module):
    """Log-softmax along dim.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: any shape; log-probabilities along ``self.dim``.
    - no parameters.

    Semantics are PyTorch's; a logit 800 below the rest must give a finite log-probability.
    If you are unsure, decide, and let the grader tell you.
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # TODO: log(softmax(x)) along self.dim, finite however small a probability.
        raise NotImplementedError("TODO: LogSoftmax.forward")
