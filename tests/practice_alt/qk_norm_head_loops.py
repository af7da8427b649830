"""Test fixture: a correct self-attention with RMSNorm QK-norm that loops over the heads, slicing
head h's D channels out of q and k, normalising them with their root mean square and sending
the gradient back through RMSNorm's backward head by head. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class QKNormSelfAttention:
    def __init__(self, d_model, n_heads, causal=False):
        self.h, self.causal = n_heads, causal
        self.wq = Parameter(np.eye(d_model))
        self.wk = Parameter(np.eye(d_model))
        self.wv = Parameter(np.eye(d_model))
        self.wo = Parameter(np.eye(d_model))
        self.gamma_q = Parameter(np.ones(d_model // n_heads))
        self.gamma_k = Parameter(np.ones(d_model // n_heads))

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.h
        eps = np.finfo(x.dtype).eps
        Q, K, V = (x @ w.data.astype(x.dtype) for w in (self.wq, self.wk, self.wv))
        out = np.zeros_like(Q)
        self.heads = []
        for h in range(self.h):
            c = slice(h * D, (h + 1) * D)
            q, k, v = Q[..., c], K[..., c], V[..., c]
            rq = 1.0 / np.sqrt((q ** 2).sum(-1, keepdims=True) / D + eps)
            rk = 1.0 / np.sqrt((k ** 2).sum(-1, keepdims=True) / D + eps)
            qn = q * rq * self.gamma_q.data.astype(x.dtype)
            kn = k * rk * self.gamma_k.data.astype(x.dtype)
            s = qn @ kn.transpose(0, 2, 1) / np.sqrt(D)
            if self.causal:
                s = np.where(np.arange(T)[None, :] > np.arange(T)[:, None], -np.inf, s)
            a = np.exp(s - s.max(-1, keepdims=True))
            a = a / a.sum(-1, keepdims=True)
            out[..., c] = a @ v
            self.heads.append((q * rq, k * rk, rq, rk, qn, kn, v, a))
        self.x, self.out = x, out
        return out @ self.wo.data.astype(x.dtype)

    def backward(self, dy):
        x, out = self.x, self.out
        B, T, C = x.shape
        D = C // self.h
        gq, gk = self.gamma_q.data.astype(dy.dtype), self.gamma_k.data.astype(dy.dtype)
        self.wo.grad += np.einsum("btc,bte->ce", out, dy)
        dout = dy @ self.wo.data.astype(dy.dtype).T
        dQ, dK, dV = np.zeros_like(dout), np.zeros_like(dout), np.zeros_like(dout)
        for h in range(self.h):
            c = slice(h * D, (h + 1) * D)
            q_hat, k_hat, rq, rk, qn, kn, v, a = self.heads[h]
            da = dout[..., c] @ v.transpose(0, 2, 1)
            dV[..., c] = a.transpose(0, 2, 1) @ dout[..., c]
            ds = a * (da - (da * a).sum(-1, keepdims=True)) / np.sqrt(D)
            dqn, dkn = ds @ kn, ds.transpose(0, 2, 1) @ qn
            self.gamma_q.grad += (dqn * q_hat).sum(axis=(0, 1))
            self.gamma_k.grad += (dkn * k_hat).sum(axis=(0, 1))
            dq_hat, dk_hat = dqn * gq, dkn * gk
            dQ[..., c] = rq * (dq_hat - q_hat * (dq_hat * q_hat).sum(-1, keepdims=True) / D)
            dK[..., c] = rk * (dk_hat - k_hat * (dk_hat * k_hat).sum(-1, keepdims=True) / D)
        dx = np.zeros_like(x)
        for w, g in ((self.wq, dQ), (self.wk, dK), (self.wv, dV)):
            w.grad += np.einsum("btc,bte->ce", x, g)
            dx += g @ w.data.astype(dy.dtype).T
        return dx
