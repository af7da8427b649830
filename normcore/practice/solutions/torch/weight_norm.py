"""Weight normalization of a Linear as a torch.nn.Module, forward only: a reference answer of
the PyTorch track.

Standalone (torch only). Semantics as torch.nn.utils.parametrizations.weight_norm(linear,
dim=0) (Salimans and Kingma, 2016): the weight w (out, in) is learnt as a length g (out, 1)
and a direction v (out, in), one length per output row, w = g * v / ||v||. The parameters
are named as torch's older torch.nn.utils.weight_norm names them, ``weight_g``, ``weight_v``
and ``bias`` (its parametrization calls g and v ``parametrizations.weight.original0`` and
``original1``). g starts at 1 here (torch starts it at ||w||, so that the wrapped Linear keeps
its weight); the grader sets its own values. Autograd computes every gradient, the projection
of dv included: ||v|| is computed from v inside the graph.

A name in brackets at the end of a line, such as ``[norm]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class WeightNormLinear(nn.Module):
    """A Linear y = x @ w.T + bias whose weight is w = g * v / ||v||, one norm per output row.

        norm  = sqrt(sum_in(v**2))            (out, 1)    one length per output row
        w     = g * v / norm                  (out, in)
        y     = x @ w.T + bias                (*, out)

    Autograd gives dv = (g / ||v||) (dw - (dw . v_hat) v_hat), dw with its part along v
    removed, because the norm is a function of v in the graph; detached, it would give
    (g / ||v||) dw.
    """

    def __init__(self, in_features, out_features):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        v = (torch.rand(out_features, in_features) * 2 - 1) / in_features ** 0.5
        self.weight_g = nn.Parameter(torch.ones(out_features, 1))  # [g]
        self.weight_v = nn.Parameter(v)
        self.bias = nn.Parameter(torch.zeros(out_features))

    def forward(self, x):
        norm = self.weight_v.pow(2).sum(dim=1, keepdim=True).sqrt()  # (out, 1) [norm]
        w = self.weight_g * self.weight_v / norm                      # (out, in) [w]
        return x @ w.T + self.bias                                    # (*, out)
