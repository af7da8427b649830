# exercise: attention
# Source: github.com/jaymody/picoGPT, gpt2.py (softmax, linear, attention, mha): GPT-2's
# forward pass in plain NumPy, one sequence [n_seq, n_embd] at a time.
# Ported: c_attn's weight is the concatenation [wq | wk | wv] and c_proj's is wo, both with
# zero biases (the exercise has none); the batch is looped over, one picoGPT call per sequence;
# picoGPT always builds the causal mask (GPT-2 is causal), here only when causal=True. picoGPT
# is inference only: the backward added differentiates each of its functions in turn, as its
# author would, with the same per-head np.split / np.hstack. Kept: the mask is
# (1 - np.tri(n)) * -1e10 added to the scores (not -inf).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def softmax(x):
    exp_x = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return exp_x / np.sum(exp_x, axis=-1, keepdims=True)


def linear(x, w, b):  # [m, in], [in, out], [out] -> [m, out]
    return x @ w + b


def attention(q, k, v, mask):  # [n_q, d_k], [n_k, d_k], [n_k, d_v], [n_q, n_k] -> [n_q, d_v]
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def attention_backward(dout, q, k, v, mask):
    scale = 1 / np.sqrt(q.shape[-1])
    p = softmax(q @ k.T * scale + mask)
    dv = p.T @ dout
    dp = dout @ v.T
    ds = p * (dp - np.sum(dp * p, axis=-1, keepdims=True))
    dq = ds @ k * scale
    dk = ds.T @ q * scale
    return dq, dk, dv


def mha(x, c_attn, c_proj, n_head, causal=True):  # [n_seq, n_embd] -> [n_seq, n_embd]
    # qkv projection
    x = linear(x, **c_attn)  # [n_seq, n_embd] -> [n_seq, 3*n_embd]

    # split into qkv
    qkv = np.split(x, 3, axis=-1)  # [n_seq, 3*n_embd] -> [3, n_seq, n_embd]

    # split into heads
    qkv_heads = list(map(lambda x: np.split(x, n_head, axis=-1), qkv))  # [3, n_seq, n_embd] -> [3, n_head, n_seq, n_embd/n_head]

    # causal mask to hide future inputs from being attended to
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10 if causal else np.zeros((x.shape[0],) * 2, x.dtype)

    # perform attention over each head
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]  # [n_head, n_seq, n_embd/n_head]

    # merge heads
    merged = np.hstack(out_heads)  # [n_head, n_seq, n_embd/n_head] -> [n_seq, n_embd]

    # out projection
    out = linear(merged, **c_proj)  # [n_seq, n_embd] -> [n_seq, n_embd]
    return out, (qkv_heads, causal_mask, merged)


def mha_backward(dout, x, c_attn, c_proj, n_head, cache):
    qkv_heads, causal_mask, merged = cache
    dc_proj_w = merged.T @ dout
    dmerged = dout @ c_proj["w"].T
    dout_heads = np.split(dmerged, n_head, axis=-1)
    dq_heads, dk_heads, dv_heads = [], [], []
    for dh, q, k, v in zip(dout_heads, *qkv_heads):
        dq, dk, dv = attention_backward(dh, q, k, v, causal_mask)
        dq_heads.append(dq), dk_heads.append(dk), dv_heads.append(dv)
    dqkv = np.hstack([np.hstack(dq_heads), np.hstack(dk_heads), np.hstack(dv_heads)])
    dc_attn_w = x.T @ dqkv
    dx = dqkv @ c_attn["w"].T
    return dx, dc_attn_w, dc_proj_w


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))

    def _params(self):
        C = self.d_model
        c_attn = {"w": np.concatenate([self.wq.data, self.wk.data, self.wv.data], axis=-1),
                  "b": np.zeros(3 * C, self.wq.data.dtype)}
        c_proj = {"w": self.wo.data, "b": np.zeros(C, self.wo.data.dtype)}
        return c_attn, c_proj

    def forward(self, x):
        c_attn, c_proj = self._params()
        self.x = x
        outs, self.caches = [], []
        for seq in x:
            out, cache = mha(seq, c_attn, c_proj, self.n_heads, self.causal)
            outs.append(out)
            self.caches.append(cache)
        return np.stack(outs)

    def backward(self, dy):
        c_attn, c_proj = self._params()
        C = self.d_model
        dxs = []
        for seq, dseq, cache in zip(self.x, dy, self.caches):
            dx, dc_attn_w, dc_proj_w = mha_backward(dseq, seq, c_attn, c_proj, self.n_heads, cache)
            self.wq.grad += dc_attn_w[:, :C]
            self.wk.grad += dc_attn_w[:, C:2 * C]
            self.wv.grad += dc_attn_w[:, 2 * C:]
            self.wo.grad += dc_proj_w
            dxs.append(dx)
        return np.stack(dxs)
