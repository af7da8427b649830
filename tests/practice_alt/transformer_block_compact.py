"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows
flattened, the LayerNorm and the feed-forward as methods with their own caches). The grader
must pass it."""

import numpy as np


class Param:
    def __init__(self, a):
        self.data = a
        self.grad = np.zeros_like(a)


class TransformerBlock:
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        self.position, self.eps = position, eps
        self.gamma, self.beta = Param(np.ones(d_model)), Param(np.zeros(d_model))
        self.w1, self.b1 = Param(np.zeros((d_model, d_ff))), Param(np.zeros(d_ff))
        self.w2, self.b2 = Param(np.zeros((d_ff, d_model))), Param(np.zeros(d_model))

    def norm(self, u):
        mu = u.mean(-1, keepdims=True)
        sigma = np.sqrt(u.var(-1, keepdims=True) + self.eps)
        self.xn, self.sigma = (u - mu) / sigma, sigma
        return self.xn * self.gamma.data + self.beta.data

    def norm_backward(self, g):
        C = g.shape[-1]
        g2, xn2 = g.reshape(-1, C), self.xn.reshape(-1, C)
        self.gamma.grad += (g2 * xn2).sum(0)
        self.beta.grad += g2.sum(0)
        gx = g * self.gamma.data
        return (C * gx - gx.sum(-1, keepdims=True)
                - self.xn * (gx * self.xn).sum(-1, keepdims=True)) / (C * self.sigma)

    def ffn(self, h):
        self.h = h
        self.pre_act = h @ self.w1.data + self.b1.data
        self.act = np.maximum(self.pre_act, 0)
        return self.act @ self.w2.data + self.b2.data

    def ffn_backward(self, g):
        C, F = self.w1.data.shape
        self.w2.grad += self.act.reshape(-1, F).T @ g.reshape(-1, C)
        self.b2.grad += g.reshape(-1, C).sum(0)
        g = (g @ self.w2.data.T) * (self.pre_act > 0)
        self.w1.grad += self.h.reshape(-1, C).T @ g.reshape(-1, F)
        self.b1.grad += g.reshape(-1, F).sum(0)
        return g @ self.w1.data.T

    def forward(self, x):
        if self.position == "pre":
            out = x + self.ffn(self.norm(x))
        elif self.position == "reordered":
            out = x + self.norm(self.ffn(x))
        else:
            out = self.norm(x + self.ffn(x))
        return out.astype(x.dtype)

    def backward(self, dy):
        if self.position == "pre":
            dx = dy + self.norm_backward(self.ffn_backward(dy))
        elif self.position == "reordered":
            dx = dy + self.ffn_backward(self.norm_backward(dy))
        else:
            g = self.norm_backward(dy)
            dx = g + self.ffn_backward(g)
        return dx.astype(dy.dtype)
