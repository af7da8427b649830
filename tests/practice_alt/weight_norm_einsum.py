"""Test fixture: a correct weight-normalized Linear written with einsum, whose dv applies the
projection matrix (I - v_hat v_hat^T) of each output row explicitly, and whose dg is
(dw . v) / ||v||. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class WeightNormLinear:
    def __init__(self, in_features, out_features, dtype=np.float64):
        self.weight_g = Parameter(np.ones((out_features, 1), dtype))
        self.weight_v = Parameter(np.ones((out_features, in_features), dtype))
        self.bias = Parameter(np.zeros(out_features, dtype))

    def forward(self, x):
        v, g = self.weight_v.data, self.weight_g.data[:, 0]
        length = np.sqrt(np.einsum("oi,oi->o", v, v))
        w = np.einsum("o,oi->oi", g / length, v)
        self.saved = (x, w, length)
        return (np.einsum("...i,oi->...o", x, w) + self.bias.data).astype(x.dtype)

    def backward(self, dy):
        x, w, length = self.saved
        v, g = self.weight_v.data, self.weight_g.data[:, 0]
        rows_dy, rows_x = dy.reshape(-1, dy.shape[-1]), x.reshape(-1, x.shape[-1])
        dw = np.einsum("no,ni->oi", rows_dy, rows_x)
        self.bias.grad += np.einsum("no->o", rows_dy)
        self.weight_g.grad += (np.einsum("oi,oi->o", dw, v) / length)[:, None]
        v_hat = v / length[:, None]
        projection = np.eye(v.shape[1]) - np.einsum("oi,oj->oij", v_hat, v_hat)
        self.weight_v.grad += np.einsum("o,oij,oj->oi", g / length, projection, dw)
        return np.einsum("...o,oi->...i", dy, w).astype(dy.dtype)
