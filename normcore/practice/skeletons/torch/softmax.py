"""Practice: Softmax in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.Softmax
along ``dim``, for any shape and any dim. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 1 to 3, every dim, float32, logits around
1000) and compares its output, and the gradients autograd gets through your forward, with
normcore.Softmax; it checks the module itself against torch.nn.Softmax (parameters, buffers
and state_dict keys; the input left unchanged) and, when a check fails, names the well-known
mistake that produces exactly your numbers. Write it from tensor operations: no normcore,
and not torch.softmax or torch.nn.functional.softmax.

A worked example, to 4 decimals (torch.nn.Softmax gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [1000.0, 1000.0, 1001.0]], requires_grad=True)
    >>> y = Softmax(dim=-1)(x)
    >>> y.detach().round(decimals=4).tolist()
    [[0.042, 0.1142, 0.8438], [0.2119, 0.2119, 0.5761]]
    >>> y.backward(torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[0.0757, 0.0916, -0.1673], [-0.1382, -0.3502, 0.4884]]
"""

import torch
from torch import nn


class Softmax(nn.Module):
    """Softmax along dim.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: any shape; the slices along ``self.dim`` sum to 1.
    - no parameters.

    Semantics are PyTorch's; logits of 1000 must not give nan. If you are unsure, decide,
    and let the grader tell you.
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # TODO: exp(x) / sum(exp(x)) along self.dim, without overflow.
        raise NotImplementedError("TODO: Softmax.forward")
