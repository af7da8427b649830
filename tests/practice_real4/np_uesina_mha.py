# exercise: attention
# Source: github.com/uesina15-max/Transformer-algorithm-application-numpy-,
# Transformer-algorithm-application-numpy.py (classes Linear and MultiHeadAttention of a
# "pure NumPy Transformer from scratch" encoder, Korean comments), commit 3df2434b.
# Ported: Wq, Wk, Wv, Wo are Linear layers whose W is the contract's wq..wo Parameter and whose
# bias stays zero (the exercise has no biases); the grads dicts the source returns are added
# into the Parameters' .grad. Kept: no mask at all (an encoder; the causal flag is stored and
# unused), and Linear.backward's grad_W = x.transpose(0, 2, 1).reshape(Din, -1) @
# grad_out.reshape(-1, Dout) / B ("평균", the batch mean).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    s = np.sum(e, axis=axis, keepdims=True)
    return e / s


# --------------------------------------------------------------------
# Linear layer (fixed gradient computation)
class Linear:
    def __init__(self, param):
        self.param = param
        self.b = np.zeros(param.data.shape[1], dtype=param.data.dtype)

    @property
    def W(self):
        return self.param.data

    def forward(self, x):
        self.x = x
        return x @ self.W + self.b

    def backward(self, grad_out):
        # x: (B, S, Din), grad_out: (B, S, Dout)
        B = self.x.shape[0]
        # grad_W: (Din, Dout)
        grad_W = self.x.transpose(0, 2, 1).reshape(self.W.shape[0], -1) @ grad_out.reshape(-1, self.W.shape[1])
        grad_W = grad_W / B  # 평균
        # grad_b: (Dout,)
        grad_b = np.sum(grad_out, axis=(0, 1))
        # grad_x: (B, S, Din)
        grad_x = grad_out @ self.W.T
        return grad_x, {'W': grad_W, 'b': grad_b}


class MultiheadSelfAttention:
    def __init__(self, d_model, n_heads, causal=False, dtype=np.float64):
        assert d_model % n_heads == 0
        self.d_model = d_model
        self.n_heads = n_heads
        self.d_k = d_model // n_heads
        self.causal = causal
        rng = np.random.default_rng(0)
        self.wq, self.wk, self.wv, self.wo = (
            Parameter((rng.standard_normal((d_model, d_model)) / np.sqrt(d_model)).astype(dtype))
            for _ in range(4))
        self.Wq = Linear(self.wq)
        self.Wk = Linear(self.wk)
        self.Wv = Linear(self.wv)
        self.Wo = Linear(self.wo)

    def forward(self, x):
        self.x = x
        B, T, _ = x.shape

        q = self.Wq.forward(x)
        k = self.Wk.forward(x)
        v = self.Wv.forward(x)

        # (B, T, d_model) -> (B, T, H, d_k) -> (B, H, T, d_k)
        q = q.reshape(B, T, self.n_heads, self.d_k).transpose(0, 2, 1, 3)
        k = k.reshape(B, T, self.n_heads, self.d_k).transpose(0, 2, 1, 3)
        v = v.reshape(B, T, self.n_heads, self.d_k).transpose(0, 2, 1, 3)

        # Scaled dot-product attention
        scores = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.sqrt(self.d_k)
        attn = softmax(scores, axis=-1)
        y = np.matmul(attn, v)  # (B, H, T, d_k)

        # Concatenate heads
        y = y.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)
        y = self.Wo.forward(y)

        self.cache = (q, k, v, attn, scores)
        return y

    def backward(self, grad_y):
        q, k, v, attn, scores = self.cache
        B, T, _ = grad_y.shape

        # Wo
        grad_wo, grads_wo = self.Wo.backward(grad_y)
        grad_y = grad_wo  # (B, T, d_model)

        # Split heads again
        grad_y = grad_y.reshape(B, T, self.n_heads, self.d_k).transpose(0, 2, 1, 3)

        # Backprop through attention
        grad_v = np.matmul(attn.transpose(0, 1, 3, 2), grad_y)
        grad_attn = np.matmul(grad_y, v.transpose(0, 1, 3, 2))

        # Softmax gradient
        grad_scores = attn * (grad_attn - np.sum(grad_attn * attn, axis=-1, keepdims=True))

        grad_q = np.matmul(grad_scores, k) / np.sqrt(self.d_k)
        grad_k = np.matmul(grad_scores.transpose(0, 1, 3, 2), q) / np.sqrt(self.d_k)

        # Reshape back
        grad_q = grad_q.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)
        grad_k = grad_k.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)
        grad_v = grad_v.transpose(0, 2, 1, 3).reshape(B, T, self.d_model)

        # Linear layers
        grad_xq, grads_q = self.Wq.backward(grad_q)
        grad_xk, grads_k = self.Wk.backward(grad_k)
        grad_xv, grads_v = self.Wv.backward(grad_v)

        grad_x = grad_xq + grad_xk + grad_xv

        for param, grads in ((self.wq, grads_q), (self.wk, grads_k), (self.wv, grads_v), (self.wo, grads_wo)):
            param.grad += grads['W']
        return grad_x
