# Multi-head self-attention, forward and a manual backward, one named tensor per node
# (makemore "backprop ninja" habit: write d<name> for every <name> in the forward).
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

    def split(self, t):
        B, T, C = t.shape
        return t.reshape(B, T, self.n_heads, C // self.n_heads).transpose(0, 2, 1, 3)

    def merge(self, t):
        B, H, T, D = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, H * D)

    def forward(self, x):
        B, T, C = x.shape
        D = C // self.n_heads
        q = self.split(x @ self.wq.data)
        k = self.split(x @ self.wk.data)
        v = self.split(x @ self.wv.data)
        scale = D ** -0.5
        att = (q @ k.transpose(0, 1, 3, 2)) * scale
        if self.causal:
            future = np.triu(np.ones((T, T), dtype=bool), k=1)
            att = np.where(future, -np.inf, att)
        att_max = att.max(-1, keepdims=True)
        att_exp = np.exp(att - att_max)
        att_sum = att_exp.sum(-1, keepdims=True)
        probs = att_exp / att_sum
        out = probs @ v
        outm = self.merge(out)
        y = outm @ self.wo.data
        self.cache = (x, q, k, v, probs, outm, scale)
        return y

    def backward(self, dy):
        x, q, k, v, probs, outm, scale = self.cache
        C = x.shape[-1]
        self.wo.grad += outm.reshape(-1, C).T @ dy.reshape(-1, C)
        doutm = dy @ self.wo.data.T
        dout = self.split(doutm)
        dprobs = dout @ v.transpose(0, 1, 3, 2)
        dv = probs.transpose(0, 1, 3, 2) @ dout
        datt = probs * (dprobs - (dprobs * probs).sum(-1, keepdims=True))
        datt = datt * scale
        dq = datt @ k
        dk = datt.transpose(0, 1, 3, 2) @ q
        dqm, dkm, dvm = self.merge(dq), self.merge(dk), self.merge(dv)
        xf = x.reshape(-1, C)
        self.wq.grad += xf.T @ dqm.reshape(-1, C)
        self.wk.grad += xf.T @ dkm.reshape(-1, C)
        self.wv.grad += xf.T @ dvm.reshape(-1, C)
        dx = dqm @ self.wq.data.T + dkm @ self.wk.data.T + dvm @ self.wv.data.T
        return dx
