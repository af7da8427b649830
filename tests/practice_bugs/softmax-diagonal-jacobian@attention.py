"""Self-attention whose softmax backward keeps only the diagonal of the Jacobian."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class SelfAttention:
    def __init__(self, d_model, n_heads, causal=False):
        self.H, self.causal = n_heads, causal
        self.wq, self.wk, self.wv, self.wo = (Parameter(np.eye(d_model)) for _ in range(4))

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.H
        self.x = x
        self.q, self.k, self.v = (x @ w.data.astype(x.dtype) for w in (self.wq, self.wk, self.wv))
        self.p, heads = [], []
        blocked = np.tril(np.ones((T, T), dtype=bool)) == 0 if self.causal else np.zeros((T, T), bool)
        for h in range(self.H):
            c = slice(h * D, (h + 1) * D)
            s = self.q[..., c] @ self.k[..., c].transpose(0, 2, 1) / np.sqrt(D).astype(x.dtype)
            s = np.where(blocked, -np.inf, s)
            e = np.exp(s - s.max(axis=2, keepdims=True))
            p = e / e.sum(axis=2, keepdims=True)
            self.p.append(p)
            heads.append(p @ self.v[..., c])
        self.concat = np.concatenate(heads, axis=-1)
        return self.concat @ self.wo.data.astype(x.dtype)

    def backward(self, dy):
        B, T, C = dy.shape
        D = C // self.H
        x = self.x
        self.wo.grad += np.einsum("btc,bte->ce", self.concat, dy)
        dconcat = dy @ self.wo.data.astype(dy.dtype).T
        dq, dk, dv = np.zeros_like(self.q), np.zeros_like(self.k), np.zeros_like(self.v)
        for h in range(self.H):
            c = slice(h * D, (h + 1) * D)
            p, do = self.p[h], dconcat[..., c]
            dp = do @ self.v[..., c].transpose(0, 2, 1)
            dv[..., c] = p.transpose(0, 2, 1) @ do
            ds = dp * p * (1 - p) / np.sqrt(D).astype(dy.dtype)
            dq[..., c] = ds @ self.k[..., c]
            dk[..., c] = ds.transpose(0, 2, 1) @ self.q[..., c]
        dx = np.zeros_like(x)
        for w, g in ((self.wq, dq), (self.wk, dk), (self.wv, dv)):
            w.grad += np.einsum("btc,bte->ce", x, g)
            dx += g @ w.data.astype(dy.dtype).T
        return dx
