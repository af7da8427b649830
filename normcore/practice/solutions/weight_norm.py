"""Weight normalization of a Linear, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.utils.parametrizations.weight_norm(linear,
dim=0) (Salimans and Kingma, 2016): the weight w (out, in) is learnt as a length g (out, 1)
and a direction v (out, in), one length per output row, w = g * v / ||v||. g starts at 1 here
(torch starts it at ||w||, so that the wrapped Linear keeps its weight); the grader sets its
own values.

A name in brackets at the end of a line, such as ``[dv]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class WeightNormLinear:
    """A Linear y = x @ w.T + bias whose weight is w = g * v / ||v||, one norm per output row.

    Forward, input (*, in)::

        norm  = sqrt(sum_in(v**2))            (out, 1)    one length per output row
        v_hat = v / norm                      (out, in)   each row of unit length
        w     = g * v_hat                     (out, in)
        y     = x @ w.T + bias                (*, out)

    Backward: first the Linear's, dw = dy^T x summed over every row of the input (x and dy
    flattened to (rows, in) and (rows, out)), dbias = sum(dy), dx = dy @ w; then through
    w = g * v / ||v||::

        dg = sum_in(dw * v_hat)               (out, 1)    the dot product (dw . v) / ||v||
        dv = (g / norm) * (dw - dg * v_hat)   (out, in)   (g / ||v||) (I - v_hat v_hat^T) dw

    dv is dw with its part along v removed, scaled by g / ||v||: moving v along itself does not
    change w, so that part of dw belongs to g alone, and each row of dv is orthogonal to the
    same row of v.
    """

    def __init__(self, in_features, out_features, dtype=np.float64):
        self.in_features, self.out_features = in_features, out_features
        self.training = True
        rng = np.random.default_rng(0)
        w = rng.uniform(-1.0, 1.0, (out_features, in_features)) / np.sqrt(in_features)
        self.weight_g = Parameter(np.ones((out_features, 1), dtype))   # (out, 1)
        self.weight_v = Parameter(w.astype(dtype))                      # (out, in)
        self.bias = Parameter(np.zeros(out_features, dtype))            # (out,)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        g, v = self.weight_g.data, self.weight_v.data                   # (out, 1), (out, in)
        norm = np.sqrt((v ** 2).sum(axis=1, keepdims=True))             # (out, 1) [norm]
        v_hat = v / norm                                                # (out, in)
        w = g * v_hat                                                   # (out, in)
        self.cache = (x, w, v_hat, g, norm)
        y = x @ w.T + self.bias.data                                    # (*, out)
        return y.astype(x.dtype)

    def backward(self, dy):
        x, w, v_hat, g, norm = self.cache
        x2 = x.reshape(-1, self.in_features)                            # (rows, in)
        dy2 = dy.reshape(-1, self.out_features)                         # (rows, out)
        dw = dy2.T @ x2                                                 # (out, in)
        self.bias.grad += dy2.sum(axis=0)                               # (out,)
        dx = dy @ w                                                     # (*, in) [dx]
        dg = (dw * v_hat).sum(axis=1, keepdims=True)                    # (out, 1) [dg]
        self.weight_g.grad += dg                                        # (out, 1) [add-dg]
        dv = g / norm * (dw - dg * v_hat)                               # (out, in) [dv]
        self.weight_v.grad += dv                                        # (out, in)
        return dx.astype(dy.dtype)
