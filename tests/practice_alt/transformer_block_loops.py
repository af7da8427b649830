"""Test fixture: a correct TransformerBlock written with Python loops over the rows (tokens):
one token's LayerNorm and feed-forward at a time, np.outer for the weight gradients. The
grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class TransformerBlock:
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        self.position, self.eps = position, eps
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(np.zeros((d_model, d_ff)))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(np.zeros((d_ff, d_model)))
        self.b2 = Parameter(np.zeros(d_model))

    # one token (a vector of C numbers) at a time
    def ln_row(self, u):
        c = len(u)
        mu = sum(u) / c
        var = sum((v - mu) ** 2 for v in u) / c
        s = np.sqrt(var + self.eps)
        xhat = (u - mu) / s
        return xhat * self.gamma.data + self.beta.data, (xhat, s)

    def ln_row_backward(self, g, cache):
        xhat, s = cache
        self.gamma.grad += g * xhat
        self.beta.grad += g
        gx = g * self.gamma.data
        return (gx - gx.mean() - xhat * (gx * xhat).mean()) / s

    def ffn_row(self, h):
        a = h @ self.w1.data + self.b1.data
        r = np.maximum(a, 0.0)
        return r @ self.w2.data + self.b2.data, (h, a, r)

    def ffn_row_backward(self, g, cache):
        h, a, r = cache
        self.w2.grad += np.outer(r, g)
        self.b2.grad += g
        da = (self.w2.data @ g) * (a > 0)
        self.w1.grad += np.outer(h, da)
        self.b1.grad += da
        return self.w1.data @ da

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        out = np.empty(rows.shape)
        self.caches = []
        for i, xi in enumerate(rows):
            if self.position == "pre":
                h, ln = self.ln_row(xi)
                f, ffn = self.ffn_row(h)
                out[i] = xi + f
            elif self.position == "reordered":
                f, ffn = self.ffn_row(xi)
                n, ln = self.ln_row(f)
                out[i] = xi + n
            else:
                f, ffn = self.ffn_row(xi)
                out[i], ln = self.ln_row(xi + f)
            self.caches.append((ln, ffn))
        return out.reshape(x.shape).astype(x.dtype)

    def backward(self, dy):
        rows = dy.reshape(-1, dy.shape[-1])
        dx = np.empty(rows.shape)
        for i, g in enumerate(rows):
            ln, ffn = self.caches[i]
            if self.position == "pre":
                dx[i] = g + self.ln_row_backward(self.ffn_row_backward(g, ffn), ln)
            elif self.position == "reordered":
                dx[i] = g + self.ffn_row_backward(self.ln_row_backward(g, ln), ffn)
            else:
                dz = self.ln_row_backward(g, ln)
                dx[i] = dz + self.ffn_row_backward(dz, ffn)
        return dx.reshape(dy.shape).astype(dy.dtype)
