"""Test fixture: a correct self-attention with RMSNorm QK-norm written with einsum on (B, T, H, D)
arrays (the heads never moved in front), the norm as two small functions, the mask added as a
triangle of -inf and the 1 / sqrt(D) folded into dscores. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def rms_forward(t, g, eps):
    r = 1.0 / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps)
    return t * r * g, (t * r, r)


def rms_backward(dn, g, saved, param):
    t_hat, r = saved
    param.grad += np.einsum("bthd,bthd->d", dn, t_hat)
    dt_hat = dn * g
    return r * (dt_hat - t_hat * np.mean(dt_hat * t_hat, axis=-1, keepdims=True))


class QKNormSelfAttention:
    def __init__(self, d_model, n_heads, causal=False):
        self.n_heads, self.causal = n_heads, causal
        rng = np.random.default_rng(1)
        self.wq, self.wk, self.wv, self.wo = (Parameter(rng.standard_normal((d_model, d_model)) * 0.1)
                                              for _ in range(4))
        self.gamma_q = Parameter(np.ones(d_model // n_heads))
        self.gamma_k = Parameter(np.ones(d_model // n_heads))

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        eps = np.finfo(x.dtype).eps
        wq, wk, wv, wo = (p.data.astype(x.dtype) for p in (self.wq, self.wk, self.wv, self.wo))
        gq, gk = self.gamma_q.data.astype(x.dtype), self.gamma_k.data.astype(x.dtype)
        q, sq = rms_forward((x @ wq).reshape(B, T, H, D), gq, eps)
        k, sk = rms_forward((x @ wk).reshape(B, T, H, D), gk, eps)
        v = (x @ wv).reshape(B, T, H, D)
        s = np.einsum("bihd,bjhd->bhij", q, k) * D ** -0.5
        if self.causal:
            s = s + np.triu(np.full((T, T), -np.inf, dtype=x.dtype), 1)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p = p / p.sum(axis=-1, keepdims=True)
        o = np.einsum("bhij,bjhd->bihd", p, v).reshape(B, T, C)
        self.saved = (x, q, k, v, p, o, sq, sk)
        return o @ wo

    def backward(self, dy):
        x, q, k, v, p, o, sq, sk = self.saved
        B, T, H, D = q.shape
        C = H * D
        wq, wk, wv, wo = (w.data.astype(dy.dtype) for w in (self.wq, self.wk, self.wv, self.wo))
        gq, gk = self.gamma_q.data.astype(dy.dtype), self.gamma_k.data.astype(dy.dtype)
        self.wo.grad += o.reshape(-1, C).T @ dy.reshape(-1, C)
        do = (dy @ wo.T).reshape(B, T, H, D)
        dp = np.einsum("bihd,bjhd->bhij", do, v)
        dv = np.einsum("bhij,bihd->bjhd", p, do).reshape(B, T, C)
        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5
        dqn = np.einsum("bhij,bjhd->bihd", ds, k)
        dkn = np.einsum("bhij,bihd->bjhd", ds, q)
        dq = rms_backward(dqn, gq, sq, self.gamma_q).reshape(B, T, C)
        dk = rms_backward(dkn, gk, sk, self.gamma_k).reshape(B, T, C)
        rows = x.reshape(-1, C).T
        self.wq.grad += rows @ dq.reshape(-1, C)
        self.wk.grad += rows @ dk.reshape(-1, C)
        self.wv.grad += rows @ dv.reshape(-1, C)
        return dq @ wq.T + dk @ wk.T + dv @ wv.T
