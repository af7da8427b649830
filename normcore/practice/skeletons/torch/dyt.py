"""Practice: DyT in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like DyT (Dynamic Tanh;
torch.nn has no DyT): y = weight * tanh(alpha * x) + bias. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 2 to 4, float32, a saturated and a nearly
linear tanh, a negative alpha) and compares its output, and the gradients autograd gets
through your forward, with normcore.DyT; it checks the module itself against the track's
torch answer (parameters, buffers and state_dict keys; the input left unchanged) and, when a
check fails, names the well-known mistake that produces exactly your numbers. Write it from
tensor operations: no normcore, and not another normcore layer.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> dyt = DyT(3, alpha_init=0.5)
    >>> list(dyt.state_dict())
    ['alpha', 'weight', 'bias']
    >>> with torch.no_grad():
    ...     _ = dyt.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    ...     _ = dyt.bias.copy_(torch.tensor([0.0, 0.1, -0.2]))
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [0.0, -1.0, 3.0]], requires_grad=True)
    >>> y = dyt(x)
    >>> y.detach().round(decimals=4).tolist()
    [[0.4621, 1.6232, 0.282], [0.0, -0.8242, 0.2526]]
    >>> y.backward(torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[0.3932, 0.0, -0.0177], [0.25, -0.3932, 0.0904]]
    >>> dyt.alpha.grad.round(decimals=4).tolist(), dyt.weight.grad.round(decimals=4).tolist()
    ([1.9737], [0.4621, 0.2311, 0.8463])
"""

import torch
from torch import nn


class DyT(nn.Module):
    """DyT: a norm layer replaced by a learnable tanh.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``self.alpha`` (shape (1,)), ``self.weight``, ``self.bias`` (shape normalized_shape):
      nn.Parameters.
    """

    def __init__(self, normalized_shape, alpha_init=0.5):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape))

    def forward(self, x):
        # TODO: y = weight * tanh(alpha * x) + bias.
        raise NotImplementedError("TODO: DyT.forward")
