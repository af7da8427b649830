# 手撕 QK-Norm 注意力：对每个头的 q、k 做归一化（这里写成了去均值的 LayerNorm，没有 beta）
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def norm_fwd(x, g, eps):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu                                    # 先去均值
    r = 1.0 / np.sqrt((xc ** 2).mean(-1, keepdims=True) + eps)
    xh = xc * r
    return xh * g, (xh, r)


def norm_bwd(dy, g, cache):
    xh, r = cache
    dxh = dy * g
    dx = r * (dxh - dxh.mean(-1, keepdims=True) - xh * (dxh * xh).mean(-1, keepdims=True))
    dg = (dy * xh).sum(axis=(0, 1, 2))             # 所有头共享 gamma，求和
    return dx, dg


class QKNormSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))
        D = d_model // n_heads
        self.gamma_q = Parameter(np.ones(D, dtype))
        self.gamma_k = Parameter(np.ones(D, dtype))

    def forward(self, x):
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        eps = np.finfo(x.dtype).eps
        def sp(t):
            return t.reshape(B, T, H, D).transpose(0, 2, 1, 3)

        q, k, v = sp(x @ self.wq.data), sp(x @ self.wk.data), sp(x @ self.wv.data)
        qn, cq = norm_fwd(q, self.gamma_q.data, eps)
        kn, ck = norm_fwd(k, self.gamma_k.data, eps)
        s = qn @ kn.transpose(0, 1, 3, 2) / D ** 0.5     # 归一化之后再缩放
        if self.causal:
            s = np.where(np.triu(np.ones((T, T), bool), 1), -np.inf, s)
        s = s - s.max(-1, keepdims=True)
        a = np.exp(s)
        a = a / a.sum(-1, keepdims=True)
        o = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, C)
        self.cache = (x, qn, kn, v, a, o, cq, ck)
        return o @ self.wo.data

    def backward(self, dy):
        x, qn, kn, v, a, o, cq, ck = self.cache
        B, T, C = x.shape
        H = self.n_heads
        D = C // H
        def sp(t):
            return t.reshape(B, T, H, D).transpose(0, 2, 1, 3)

        def mg(t):
            return t.transpose(0, 2, 1, 3).reshape(B, T, C)

        self.wo.grad += o.reshape(-1, C).T @ dy.reshape(-1, C)
        do = sp(dy @ self.wo.data.T)
        da = do @ v.transpose(0, 1, 3, 2)
        dv = a.transpose(0, 1, 3, 2) @ do
        ds = a * (da - (da * a).sum(-1, keepdims=True)) / D ** 0.5
        dqn = ds @ kn
        dkn = ds.transpose(0, 1, 3, 2) @ qn
        dq, dgq = norm_bwd(dqn, self.gamma_q.data, cq)
        dk, dgk = norm_bwd(dkn, self.gamma_k.data, ck)
        self.gamma_q.grad += dgq
        self.gamma_k.grad += dgk
        dq, dk, dv = mg(dq), mg(dk), mg(dv)
        xf = x.reshape(-1, C)
        self.wq.grad += xf.T @ dq.reshape(-1, C)
        self.wk.grad += xf.T @ dk.reshape(-1, C)
        self.wv.grad += xf.T @ dv.reshape(-1, C)
        return dq @ self.wq.data.T + dk @ self.wk.data.T + dv @ self.wv.data.T
