"""Test fixture: a correct TransformerBlock in the cs231n style.

Each layer is a pair of functions, the forward returning a cache and the backward every
gradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use
tensordot, ReLU is np.where. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def layernorm_forward(x, gamma, beta, eps):
    mu = np.mean(x, axis=-1, keepdims=True)
    xmu = x - mu
    var = np.mean(xmu ** 2, axis=-1, keepdims=True)
    ivar = 1.0 / np.sqrt(var + eps)
    xhat = xmu * ivar
    return gamma * xhat + beta, (xhat, xmu, ivar, var, gamma, eps)


def layernorm_backward(dout, cache):
    xhat, xmu, ivar, var, gamma, eps = cache
    d = dout.shape[-1]
    lead = tuple(range(dout.ndim - 1))
    dgamma = np.sum(dout * xhat, axis=lead)
    dbeta = np.sum(dout, axis=lead)
    dxhat = dout * gamma
    dvar = np.sum(dxhat * xmu, axis=-1, keepdims=True) * -0.5 * (var + eps) ** -1.5
    dmu = np.sum(-dxhat * ivar, axis=-1, keepdims=True) + dvar * np.mean(-2.0 * xmu, axis=-1, keepdims=True)
    dx = dxhat * ivar + dvar * 2.0 * xmu / d + dmu / d
    return dx, dgamma, dbeta


def ffn_forward(x, w1, b1, w2, b2):
    a = x @ w1 + b1
    r = np.where(a > 0, a, 0.0)
    return r @ w2 + b2, (x, a, r, w1, w2)


def ffn_backward(dout, cache):
    x, a, r, w1, w2 = cache
    lead = list(range(x.ndim - 1))
    dw2 = np.tensordot(r, dout, axes=(lead, lead))
    db2 = dout.reshape(-1, dout.shape[-1]).sum(axis=0)
    da = np.where(a > 0, dout @ w2.T, 0.0)
    dw1 = np.tensordot(x, da, axes=(lead, lead))
    db1 = da.reshape(-1, da.shape[-1]).sum(axis=0)
    return da @ w1.T, dw1, db1, dw2, db2


class TransformerBlock:
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        self.position, self.eps = position, eps
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(np.zeros((d_model, d_ff)))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(np.zeros((d_ff, d_model)))
        self.b2 = Parameter(np.zeros(d_model))

    def _ln(self, x):
        y, self.ln_cache = layernorm_forward(x, self.gamma.data, self.beta.data, self.eps)
        return y

    def _ffn(self, x):
        y, self.ffn_cache = ffn_forward(x, self.w1.data, self.b1.data, self.w2.data, self.b2.data)
        return y

    def forward(self, x):
        if self.position == "pre":
            y = x + self._ffn(self._ln(x))
        elif self.position == "reordered":
            y = x + self._ln(self._ffn(x))
        else:
            y = self._ln(x + self._ffn(x))
        return y.astype(x.dtype)

    def backward(self, dy):
        if self.position == "pre":
            dh, dw1, db1, dw2, db2 = ffn_backward(dy, self.ffn_cache)
            dxn, dgamma, dbeta = layernorm_backward(dh, self.ln_cache)
            dx = dy + dxn
        elif self.position == "reordered":
            dn, dgamma, dbeta = layernorm_backward(dy, self.ln_cache)
            dxf, dw1, db1, dw2, db2 = ffn_backward(dn, self.ffn_cache)
            dx = dy + dxf
        else:
            dz, dgamma, dbeta = layernorm_backward(dy, self.ln_cache)
            df, dw1, db1, dw2, db2 = ffn_backward(dz, self.ffn_cache)
            dx = dz + df
        for name, g in (("gamma", dgamma), ("beta", dbeta), ("w1", dw1), ("b1", db1),
                        ("w2", dw2), ("b2", db2)):
            getattr(self, name).grad += g
        return dx.astype(dy.dtype)
