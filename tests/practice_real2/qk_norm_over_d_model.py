# QK-norm attention, functional style; the RMS of q and k is taken over every channel
# of a position (the heads and their channels together).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def rms_norm(x, g, eps, axes=(-1,)):
    r = 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + eps)
    xh = x * r
    lead = tuple(range(x.ndim - 1))

    def vjp(dy):
        dxh = dy * g
        dx = r * (dxh - xh * np.mean(dxh * xh, axis=axes, keepdims=True))
        return dx, np.sum(dy * xh, axis=lead)
    return xh * g, vjp


def matmul_w(x, w):
    def vjp(dy):
        return dy @ w.T, x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])
    return x @ w, vjp


def causal_softmax(s, causal):
    T = s.shape[-1]
    if causal:
        s = np.where(np.tril(np.ones((T, T), dtype=bool)), s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)

    def vjp(dp):
        return p * (dp - np.sum(dp * p, -1, keepdims=True))
    return p, vjp


class QKNormSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        assert d_model % n_heads == 0
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))
        D = d_model // n_heads
        self.gamma_q = Parameter(np.ones(D, dtype))
        self.gamma_k = Parameter(np.ones(D, dtype))

    def _split(self, t):
        B, T, C = t.shape
        return t.reshape(B, T, self.n_heads, -1).transpose(0, 2, 1, 3)

    def _merge(self, t):
        B, H, T, D = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, H * D)

    def forward(self, x):
        eps = np.finfo(x.dtype).eps
        D = self.d_model // self.n_heads
        q, self.vq = matmul_w(x, self.wq.data)
        k, self.vk = matmul_w(x, self.wk.data)
        v, self.vv = matmul_w(x, self.wv.data)
        q, k, v = self._split(q), self._split(k), self._split(v)
        qn, self.vqn = rms_norm(q, self.gamma_q.data, eps, axes=(1, 3))
        kn, self.vkn = rms_norm(k, self.gamma_k.data, eps, axes=(1, 3))
        self.scale = D ** -0.5
        s = qn @ kn.swapaxes(-1, -2) * self.scale
        p, self.vsm = causal_softmax(s, self.causal)
        o = self._merge(p @ v)
        y, self.vo = matmul_w(o, self.wo.data)
        self.qn, self.kn, self.v, self.p = qn, kn, v, p
        return y

    def backward(self, dy):
        do, dwo = self.vo(dy)
        self.wo.grad += dwo
        do = self._split(do)
        dp = do @ self.v.swapaxes(-1, -2)
        dv = self.p.swapaxes(-1, -2) @ do
        ds = self.vsm(dp) * self.scale
        dqn = ds @ self.kn
        dkn = ds.swapaxes(-1, -2) @ self.qn
        dq, dgq = self.vqn(dqn)
        dk, dgk = self.vkn(dkn)
        self.gamma_q.grad += dgq
        self.gamma_k.grad += dgk
        dx = 0
        for grad, vjp, w in ((dq, self.vq, self.wq), (dk, self.vk, self.wk), (dv, self.vv, self.wv)):
            dxi, dw = vjp(self._merge(grad))
            w.grad += dw
            dx = dx + dxi
        return dx
