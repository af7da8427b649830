"""Self-attention that merges the heads back with a bare reshape, (B, H, T, D) -> (B, T, C),
without first moving H back next to D (the split is right)."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False):
        self.n_heads, self.causal = n_heads, causal
        self.wq, self.wk, self.wv, self.wo = (Parameter(np.eye(d_model) * 0.5) for _ in range(4))

    def heads(self, t):
        B, T, C = t.shape
        return t.reshape(B, T, self.n_heads, C // self.n_heads).transpose(0, 2, 1, 3)

    def unheads(self, t):
        B, H, T, D = t.shape
        return t.reshape(B, T, H * D)

    def forward(self, x):
        T, D = x.shape[1], x.shape[2] // self.n_heads
        w = [p.data.astype(x.dtype) for p in (self.wq, self.wk, self.wv, self.wo)]
        q, k, v = self.heads(x @ w[0]), self.heads(x @ w[1]), self.heads(x @ w[2])
        s = q @ np.swapaxes(k, 2, 3) / np.sqrt(D).astype(x.dtype)
        if self.causal:
            s[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] = -np.inf
        a = np.exp(s - s.max(axis=3, keepdims=True))
        a /= a.sum(axis=3, keepdims=True)
        self.ctx = (x, q, k, v, a, self.unheads(a @ v), w)
        return self.ctx[5] @ w[3]

    def backward(self, dy):
        x, q, k, v, a, o, w = self.ctx
        D = q.shape[3]
        C = x.shape[2]
        self.wo.grad += np.tensordot(o, dy, axes=([0, 1], [0, 1]))
        do = self.heads(dy @ w[3].T)
        da = do @ np.swapaxes(v, 2, 3)
        dv = np.swapaxes(a, 2, 3) @ do
        ds = a * (da - np.sum(a * da, axis=3, keepdims=True)) / np.sqrt(D).astype(dy.dtype)
        dq, dk = ds @ k, np.swapaxes(ds, 2, 3) @ q
        dx = np.zeros_like(x)
        for p, wi, g in ((self.wq, w[0], dq), (self.wk, w[1], dk), (self.wv, w[2], dv)):
            g = self.unheads(g)
            p.grad += x.reshape(-1, C).T @ g.reshape(-1, C)
            dx = dx + g @ wi.T
        return dx
