"""Practice: soft-capping in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module computes y = cap * tanh(x / cap) element
by element, as normcore's SoftCap(cap) does (the cap Gemma 2 puts on its attention scores
and final logits; torch has no such layer). Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 2 and 3, float32, caps from 0.5 to 30,
inputs far below the cap and far beyond it) and compares its output, and the gradients
autograd gets through your forward, with normcore's SoftCap; it checks the module itself
(parameters, buffers and state_dict keys; the input left unchanged) and, when a check fails,
names the well-known mistake that produces exactly your numbers. Write it from tensor
operations: no normcore.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> x = torch.tensor([[0.5, -1.0, 3.0], [6.0, 0.0, -4.0]], requires_grad=True)
    >>> y = SoftCap(2.0)(x)
    >>> y.round(decimals=4).tolist()
    [[0.4898, -0.9242, 1.8103], [1.9901, 0.0, -1.9281]]
    >>> y.backward(torch.tensor([[1.0, 0.5, -1.0], [0.5, -0.5, 2.0]]))
    >>> x.grad.round(decimals=4).tolist()
    [[0.94, 0.3932, -0.1807], [0.0049, -0.5, 0.1413]]
"""

import torch
from torch import nn


class SoftCap(nn.Module):
    """y = cap * tanh(x / cap), element by element, any shape.

    The contract the grader relies on (keep these names):

    - ``SoftCap(cap)``: cap a number > 0.
    - ``forward(x) -> y``: y of x's shape and dtype.
    - no parameters.
    """

    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, x):
        # TODO: y = cap * tanh(x / cap), element by element.
        raise NotImplementedError("TODO: SoftCap.forward")
