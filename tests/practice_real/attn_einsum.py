import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        assert d_model % n_heads == 0
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        q = np.einsum("btc,cd->btd", x, self.wq.data).reshape(B, T, H, D)
        k = np.einsum("btc,cd->btd", x, self.wk.data).reshape(B, T, H, D)
        v = np.einsum("btc,cd->btd", x, self.wv.data).reshape(B, T, H, D)
        s = np.einsum("bqhd,bkhd->bhqk", q, k) / D ** 0.5
        if self.causal:
            s = np.where(np.triu(np.ones((T, T), bool), k=1), -np.inf, s)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a /= a.sum(-1, keepdims=True)
        o = np.einsum("bhqk,bkhd->bqhd", a, v).reshape(B, T, C)
        self.cache = (x, q, k, v, a, o)
        return np.einsum("btc,cd->btd", o, self.wo.data)

    def backward(self, dy):
        x, q, k, v, a, o = self.cache
        B, T, H, D = q.shape
        C = H * D
        self.wo.grad += np.einsum("btc,btd->cd", o, dy)
        do = np.einsum("btd,cd->btc", dy, self.wo.data).reshape(B, T, H, D)
        da = np.einsum("bqhd,bkhd->bhqk", do, v)
        dv = np.einsum("bhqk,bqhd->bkhd", a, do)
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / D ** 0.5
        dq = np.einsum("bhqk,bkhd->bqhd", ds, k).reshape(B, T, C)
        dk = np.einsum("bhqk,bqhd->bkhd", ds, q).reshape(B, T, C)
        dv = dv.reshape(B, T, C)
        dx = np.zeros_like(x)
        for w, d in ((self.wq, dq), (self.wk, dk), (self.wv, dv)):
            w.grad += np.einsum("btc,btd->cd", x, d)
            dx += np.einsum("btd,cd->btc", d, w.data)
        return dx
