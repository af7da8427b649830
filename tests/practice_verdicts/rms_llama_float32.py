"""Meta's LLaMA RMSNorm (llama/model.py: ``self._norm(x.float()).type_as(x)``), ported to the
NumPy skeleton: the normalisation in float32 whatever the input, then cast back; its
backward by hand, in float32 too."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _norm(self, x, eps):
        axes = tuple(range(-len(self.normalized_shape), 0))
        r = 1.0 / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + np.float32(eps))
        return x * r, r

    def forward(self, x):
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        h = x.astype(np.float32)                      # x.float()
        x_hat, r = self._norm(h, eps)
        self.cache = (x_hat, r, x.dtype)
        return (x_hat.astype(x.dtype) * self.gamma.data).astype(x.dtype)   # .type_as(x) * weight

    def backward(self, dy):
        x_hat, r, dtype = self.cache
        axes = tuple(range(-len(self.normalized_shape), 0))
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        self.gamma.grad += (dy * x_hat).sum(axis=lead).astype(self.gamma.grad.dtype)
        g = (dy * self.gamma.data).astype(np.float32)
        dx = r * (g - x_hat * np.mean(g * x_hat, axis=axes, keepdims=True))
        return dx.astype(dtype)
