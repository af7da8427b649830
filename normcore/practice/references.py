"""normcore's own layers behind the practice contract, where their contract differs.

The grader's reference for an exercise is normcore's layer. When the exercise's contract
(parameter names and layout) is not the layer's own, a small adapter here builds normcore's
layer and exposes the practice contract; every number still comes from normcore's layer.
"""

import numpy as np

from .. import nn
from ..module import Parameter


# --- attention ----------------------------------------------------------------------------------
class MultiheadSelfAttention:
    """``nn.MultiheadSelfAttention(d_model, n_heads, causal, bias=False)`` with the practice
    contract: ``wq``, ``wk``, ``wv``, ``wo`` of shape (C, C) used as ``q = x @ wq``.

    normcore's projections are ``Linear`` layers computing ``x @ weight.T`` with weight (out, in),
    so ``wq`` is ``q.weight`` transposed (and so on). The weights are copied into the layer at
    each forward (the caller may replace ``wq.data``), and the layer's weight gradients,
    transposed back, are added into ``wq.grad`` ... at each backward.
    """

    PROJECTIONS = ("q", "k", "v", "o")

    def __init__(self, d_model, n_heads, causal=False):
        self.layer = nn.MultiheadSelfAttention(d_model, n_heads, causal=causal, bias=False, rng=0)
        for name in self.PROJECTIONS:
            setattr(self, "w" + name, Parameter(getattr(self.layer, name).weight.data.T))

    def forward(self, x):
        for name in self.PROJECTIONS:
            linear = getattr(self.layer, name)
            linear.weight.data = np.array(getattr(self, "w" + name).data, dtype=np.float64).T.copy()
        return self.layer.forward(x)

    def backward(self, dy):
        for name in self.PROJECTIONS:
            getattr(self.layer, name).weight.grad[...] = 0.0
        dx = self.layer.backward(dy)
        for name in self.PROJECTIONS:
            param = getattr(self, "w" + name)
            param.grad += getattr(self.layer, name).weight.grad.T
        return dx
