"""Practice: weight normalization of a Linear in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like
torch.nn.utils.parametrizations.weight_norm on a torch.nn.Linear with dim=0 (Salimans and
Kingma, 2016): the weight is learnt as a length g and a direction v,

    w = g * v / ||v||        one norm per output row: g (out, 1), v (out, in)
    y = x @ w.T + bias

Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (rank 2 and 3, float32, rows of v of very
different lengths, one output, one sample) and compares its output, and the gradients
autograd gets through your forward, with normcore.WeightNorm(normcore.Linear(...)); it checks
the module itself against the track's torch answer (parameters, buffers and state_dict keys;
the input left unchanged) and, when a check fails, names the well-known mistake that produces
exactly your numbers. Write it from tensor operations: no normcore. A module that applies
torch.nn.utils.parametrizations.weight_norm to its own weight passes too (g and v are then its
parametrizations.weight.original0 and original1), but the interview asks for the formula.

A worked example, to 4 decimals (the reference answer gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> wn = WeightNormLinear(3, 2)
    >>> sorted(wn.state_dict())
    ['bias', 'weight_g', 'weight_v']
    >>> with torch.no_grad():
    ...     _ = wn.weight_g.copy_(torch.tensor([[2.0], [-1.0]]))
    ...     _ = wn.weight_v.copy_(torch.tensor([[3.0, 0.0, 4.0], [1.0, 2.0, 2.0]]))
    ...     _ = wn.bias.copy_(torch.tensor([0.5, -0.5]))
    >>> x = torch.tensor([[1.0, -1.0, 2.0], [0.0, 3.0, 1.0], [2.0, 1.0, 0.0], [-1.0, 0.0, 1.0]],
    ...                  requires_grad=True)
    >>> y = wn(x)
    >>> y.detach().round(decimals=4).tolist()
    [[4.9, -1.5], [2.1, -3.1667], [2.9, -1.8333], [0.9, -0.8333]]
    >>> y.backward(torch.tensor([[1.0, 0.0], [0.5, -1.0], [0.0, 2.0], [-1.0, 1.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[1.2, 0.0, 1.6], [0.9333, 0.6667, 1.4667], [-0.6667, -1.3333, -1.3333], [-1.5333, -0.6667, -2.2667]]
    >>> wn.weight_g.grad.round(decimals=4).tolist(), wn.bias.grad.round(decimals=4).tolist()
    ([[2.4], [0.3333]], [0.5, 2.0])
    >>> wn.weight_v.grad.round(decimals=4).tolist()
    [[0.224, 0.2, -0.168], [-0.963, 0.4074, 0.0741]]
"""

import torch
from torch import nn


class WeightNormLinear(nn.Module):
    """A Linear y = x @ w.T + bias whose weight is w = g * v / ||v||, one norm per output row.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, in_features); y (*, out_features) in x's dtype.
    - ``self.weight_g`` (out, 1), ``self.weight_v`` (out, in), ``self.bias`` (out,):
      nn.Parameters, named as torch.nn.utils.weight_norm names them, so that autograd fills
      their ``.grad`` and ``state_dict()`` holds them.

    Both g and v reach w, and v reaches it twice: directly and through ||v||. If you are
    unsure whether autograd should see both, decide, and let the grader tell you.
    """

    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        v = (torch.rand(out_features, in_features) * 2 - 1) / in_features ** 0.5
        self.weight_g = nn.Parameter(torch.ones(out_features, 1))
        self.weight_v = nn.Parameter(v)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        # TODO: w = g * v / ||v|| (one norm per output row), then y = x @ w.T + bias.
        raise NotImplementedError("TODO: WeightNormLinear.forward")
