# 手撕多头自注意力（前向 + 反向）
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def softmax(s):
    s = s - s.max(axis=-1, keepdims=True)   # 减最大值，防止溢出
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        # 拆头：直接 reshape 成 (B, H, T, D)
        q = (x @ self.wq.data).reshape(B, H, T, D)
        k = (x @ self.wk.data).reshape(B, H, T, D)
        v = (x @ self.wv.data).reshape(B, H, T, D)
        s = q @ k.swapaxes(-1, -2) / D ** 0.5
        if self.causal:
            s = s + np.triu(np.full((T, T), -np.inf), 1)   # 上三角为 -inf
        a = softmax(s)
        o = a @ v                                           # (B, H, T, D)
        o2 = o.reshape(B, T, C)                             # 合并头
        self.cache = (x, q, k, v, a, o2)
        return o2 @ self.wo.data

    def backward(self, dy):
        x, q, k, v, a, o2 = self.cache
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        self.wo.grad += np.einsum('btc,btd->cd', o2, dy)
        do = (dy @ self.wo.data.T).reshape(B, H, T, D)
        da = do @ v.swapaxes(-1, -2)
        dv = a.swapaxes(-1, -2) @ do
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / D ** 0.5   # softmax 反向
        dq = ds @ k
        dk = ds.swapaxes(-1, -2) @ q
        dq, dk, dv = (t.reshape(B, T, C) for t in (dq, dk, dv))
        self.wq.grad += np.einsum('btc,btd->cd', x, dq)
        self.wk.grad += np.einsum('btc,btd->cd', x, dk)
        self.wv.grad += np.einsum('btc,btd->cd', x, dv)
        return dq @ self.wq.data.T + dk @ self.wk.data.T + dv @ self.wv.data.T
