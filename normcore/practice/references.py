"""The grader's references for exercises whose layer normcore builds from several of its own.

Each class here is normcore's own layers wired together behind the practice contract of one
exercise (the parameter names and layouts its skeleton states), so that the grader compares
the user's numbers with normcore's and nothing else. The layers themselves are unchanged.
"""

import numpy as np

from ..nn import FeedForward
from ..norms import LayerNorm


# --- transformer_block ----------------------------------------------------------------------------
class _TransposedWeight:
    """A Linear's weight, stored (out, in), seen as the (in, out) matrix ``h @ w`` multiplies:
    ``.data`` and ``.grad`` read and write the Linear's own arrays, transposed."""

    def __init__(self, param):
        self.param = param

    @property
    def data(self):
        return self.param.data.T

    @data.setter
    def data(self, value):
        self.param.data = np.array(np.asarray(value).T, dtype=self.param.dtype)

    @property
    def grad(self):
        return self.param.grad.T

    @grad.setter
    def grad(self, value):
        self.param.grad = np.array(np.asarray(value).T, dtype=self.param.dtype)


class FeedForwardBlock:
    """normcore's LayerNorm and FeedForward(d_model, d_ff, activation="relu") in a residual
    block: y = x + ffn(norm(x)) for ``position="pre"``, y = norm(x + ffn(x)) for "post".

    The backward is the chain rule over the residual add, as in normcore's TransformerBlock
    (which has an attention sub-layer too): dx = dy + norm'(ffn'(dy)) for "pre";
    dz = norm'(dy), dx = dz + ffn'(dz) for "post". Parameters in the practice contract:
    ``gamma``, ``beta`` (the norm's weight and bias), ``w1`` (C, d_ff), ``b1``, ``w2`` (d_ff, C),
    ``b2``; w1 and w2 are the transposes of fc1.weight and fc2.weight.
    """

    built_from = "normcore.LayerNorm and normcore.nn.FeedForward"  # named in the report

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post"):
            raise ValueError(f"position must be 'pre' or 'post', got {position!r}")
        self.position = position
        self.norm = LayerNorm(d_model, eps=eps)
        self.ffn = FeedForward(d_model, d_ff, activation="relu", rng=rng)
        self.gamma, self.beta = self.norm.weight, self.norm.bias
        self.w1, self.b1 = _TransposedWeight(self.ffn.fc1.weight), self.ffn.fc1.bias
        self.w2, self.b2 = _TransposedWeight(self.ffn.fc2.weight), self.ffn.fc2.bias

    def forward(self, x):
        if self.position == "pre":
            return x + self.ffn(self.norm(x))
        return self.norm(x + self.ffn(x))

    def backward(self, dy):
        if self.position == "pre":
            return dy + self.norm.backward(self.ffn.backward(dy))
        dz = self.norm.backward(dy)
        return dz + self.ffn.backward(dz)
