# exercise: layernorm
# Source: github.com/karpathy/llm.c, doc/layernorm/layernorm.py (class LayerNorm, forward and
# backward as staticmethods, written with torch tensors for (B, T, C)).
# Ported to NumPy: torch ops replaced by their NumPy twins (sum(-1, keepdims=True),
# .sum((0, 1)) generalised to the leading axes so that (N, C) input works too); the
# staticmethods' cache kept on the object; w, b are the contract's gamma, beta. Kept: the
# statistics over the last axis C only, and eps = 1e-5 written inside forward.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    @staticmethod
    def _forward(x, w, b):
        eps = 1e-5
        C = x.shape[-1]
        mean = x.sum(-1, keepdims=True) / C # B,T,1
        xshift = x - mean # B,T,C
        var = (xshift**2).sum(-1, keepdims=True) / C # B,T,1
        rstd = (var + eps) ** -0.5 # B,T,1
        norm = xshift * rstd # B,T,C
        out = norm * w + b # B,T,C

        cache = (x, w, mean, rstd)
        return out, cache

    @staticmethod
    def _backward(dout, cache):
        x, w, mean, rstd = cache
        lead = tuple(range(dout.ndim - w.ndim))
        # recompute the norm (save memory at the cost of compute)
        norm = (x - mean) * rstd
        # gradients for weights, bias
        db = dout.sum(lead)
        dw = (dout * norm).sum(lead)
        # gradients for input
        dnorm = dout * w
        dx = dnorm - dnorm.mean(-1, keepdims=True) - norm * (dnorm * norm).mean(-1, keepdims=True)
        dx *= rstd
        return dx, dw, db

    def forward(self, x):
        out, self.cache = LayerNorm._forward(x, self.gamma.data, self.beta.data)
        return out

    def backward(self, dout):
        dx, dw, db = LayerNorm._backward(dout, self.cache)
        self.gamma.grad += dw
        self.beta.grad += db
        return dx
