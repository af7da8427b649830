"""Multi-head self-attention, forward and backward, every product written as an einsum."""
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def _split(self, a):
        b, t, c = a.shape
        return a.reshape(b, t, self.n_heads, c // self.n_heads).transpose(0, 2, 1, 3)

    def _merge(self, a):
        b, h, t, d = a.shape
        return a.transpose(0, 2, 1, 3).reshape(b, t, h * d)

    def _scale(self):
        return 1.0 / np.sqrt(self.d_model // self.n_heads)

    def _mask(self, t):
        return np.triu(np.ones((t, t), dtype=bool), k=1)

    def forward(self, x):
        self.x = x
        q = self._split(np.einsum("btc,ce->bte", x, self.wq.data))
        k = self._split(np.einsum("btc,ce->bte", x, self.wk.data))
        v = self._split(np.einsum("btc,ce->bte", x, self.wv.data))
        s = np.einsum("bhtd,bhsd->bhts", q, k) * x.dtype.type(self._scale())
        if self.causal:
            s = np.where(self._mask(x.shape[1]), -np.inf, s)
        s = s - s.max(axis=-1, keepdims=True)
        a = np.exp(s)
        a /= a.sum(axis=-1, keepdims=True)
        o = self._merge(np.einsum("bhts,bhsd->bhtd", a, v))
        self.q, self.k, self.v, self.a, self.o = q, k, v, a, o
        return np.einsum("btc,ce->bte", o, self.wo.data)

    def backward(self, dy):
        self.wo.grad += np.einsum("btc,bte->ce", self.o, dy)
        do = self._split(np.einsum("bte,ce->btc", dy, self.wo.data))
        da = np.einsum("bhtd,bhsd->bhts", do, self.v)
        dv = np.einsum("bhts,bhtd->bhsd", self.a, do)
        ds = self.a * (da - np.einsum("bhts,bhts->bht", da, self.a)[..., None])
        ds = ds * dy.dtype.type(self._scale())
        dq = np.einsum("bhts,bhsd->bhtd", ds, self.k)
        dk = np.einsum("bhts,bhtd->bhsd", ds, self.q)
        dx = np.zeros_like(self.x)
        for w, g in ((self.wq, dq), (self.wk, dk), (self.wv, dv)):
            gm = self._merge(g)
            w.grad += np.einsum("btc,bte->ce", self.x, gm)
            dx += np.einsum("bte,ce->btc", gm, w.data)
        return dx.astype(dy.dtype)
