# exercise: transformer_block
# Source: github.com/uesina15-max/Transformer-algorithm-application-numpy-,
# Transformer-algorithm-application-numpy.py (classes Linear, LayerNorm, FeedForward and
# TransformerBlock: a Post-LN encoder block, Korean comments), commit 3df2434b.
# Ported: the exercise's block has one sub-layer, the ReLU feed-forward, so the source's
# second half is taken: out = norm2(x + ff(x)); gamma/beta are norm2's, w1/b1 and w2/b2 are
# ff.w1's and ff.w2's W and b (Parameters shared with the Linear objects); the grads dicts the
# source returns are added into .grad. The source knows only this (Post-LN) arrangement and
# the port builds it for either position. Kept: Linear.backward's grad_W =
# x.transpose(0, 2, 1).reshape(Din, -1) @ grad_out.reshape(-1, Dout) / B and grad_b summed
# over axes (0, 1); LayerNorm's staged backward.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def relu(x):
    return np.maximum(0, x)

def drelu(x):
    return (x > 0).astype(x.dtype)


# --------------------------------------------------------------------
# Linear layer (fixed gradient computation)
class Linear:
    def __init__(self, W, b):
        self.Wp, self.bp = W, b

    def forward(self, x):
        self.x = x
        return x @ self.Wp.data + self.bp.data

    def backward(self, grad_out):
        W = self.Wp.data
        # x: (B, S, Din), grad_out: (B, S, Dout)
        B = self.x.shape[0]
        # grad_W: (Din, Dout)
        grad_W = self.x.transpose(0, 2, 1).reshape(W.shape[0], -1) @ grad_out.reshape(-1, W.shape[1])
        grad_W = grad_W / B  # 평균
        # grad_b: (Dout,)
        grad_b = np.sum(grad_out, axis=(0, 1))
        # grad_x: (B, S, Din)
        grad_x = grad_out @ W.T
        return grad_x, {'W': grad_W, 'b': grad_b}


# --------------------------------------------------------------------
# LayerNorm (완전히 수정된 정확한 backward)
class LayerNorm:
    def __init__(self, gamma, beta, eps=1e-5):
        self.eps = eps
        self.gammap, self.betap = gamma, beta

    def forward(self, x):
        self.x = x
        mean = np.mean(x, axis=-1, keepdims=True)
        var = np.var(x, axis=-1, keepdims=True)
        std = np.sqrt(var + self.eps)
        x_norm = (x - mean) / std
        out = self.gammap.data * x_norm + self.betap.data

        # 저장
        self.mean = mean
        self.var = var
        self.std = std
        self.x_norm = x_norm
        self.out = out
        return out

    def backward(self, grad_out):
        x_hat = self.x_norm
        N = self.x.shape[-1]

        grad_gamma = np.sum(grad_out * x_hat, axis=tuple(range(grad_out.ndim - 1)))
        grad_beta = np.sum(grad_out, axis=tuple(range(grad_out.ndim - 1)))

        grad_x_hat = grad_out * self.gammap.data

        # dL/dvar, dL/dmean
        dvar = np.sum(grad_x_hat * (self.x - self.mean) * -0.5 * (self.var + self.eps) ** -1.5,
                      axis=-1, keepdims=True)
        dmean = np.sum(grad_x_hat * -1.0 / self.std, axis=-1, keepdims=True) + \
                dvar * np.mean(-2.0 * (self.x - self.mean), axis=-1, keepdims=True)

        # dL/dx
        grad_x = (grad_x_hat / self.std +
                  dvar * 2.0 * (self.x - self.mean) / N +
                  dmean / N)

        return grad_x, {'gamma': grad_gamma, 'beta': grad_beta}


# --------------------------------------------------------------------
# FeedForward
class FeedForward:
    def __init__(self, w1, b1, w2, b2):
        self.w1 = Linear(w1, b1)
        self.w2 = Linear(w2, b2)

    def forward(self, x):
        self.x = x
        h = relu(self.w1.forward(x))
        self.h = h
        out = self.w2.forward(h)
        return out

    def backward(self, grad_out):
        grad_h, grads_w2 = self.w2.backward(grad_out)
        grad_h = grad_h * drelu(self.h)
        grad_x, grads_w1 = self.w1.backward(grad_h)
        grads = {}
        for k, v in grads_w1.items(): grads[f'w1_{k}'] = v
        for k, v in grads_w2.items(): grads[f'w2_{k}'] = v
        return grad_x, grads


class TransformerBlock:
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post"):
            raise ValueError(f"position must be 'pre' or 'post', got {position!r}")
        self.position = position
        self.eps = eps
        rng = np.random.default_rng(rng)
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff))
        self.b2 = Parameter(np.zeros(d_model))
        self.ff = FeedForward(self.w1, self.b1, self.w2, self.b2)
        self.norm2 = LayerNorm(self.gamma, self.beta, eps)

    def forward(self, x):
        ff_out = self.ff.forward(x)
        out = self.norm2.forward(x + ff_out)
        return out

    def backward(self, grad_out):
        # norm2 + residual
        grad_x_ff, grads_norm2 = self.norm2.backward(grad_out)
        grad_ff, grads_ff = self.ff.backward(grad_x_ff)
        grad_x = grad_x_ff + grad_ff  # residual
        self.gamma.grad += grads_norm2['gamma']
        self.beta.grad += grads_norm2['beta']
        self.w1.grad += grads_ff['w1_W']
        self.b1.grad += grads_ff['w1_b']
        self.w2.grad += grads_ff['w2_W']
        self.b2.grad += grads_ff['w2_b']
        return grad_x
