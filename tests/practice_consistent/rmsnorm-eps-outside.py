"""RMSNorm with eps added to the RMS (the RMSNorm authors' code writes it so), and the backward
derived for that forward."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    def __init__(self, normalized_shape, eps=None):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.shape = shape
        self.eps = np.finfo(np.float64).eps if eps is None else eps
        self.gamma = Parameter(np.ones(shape))

    def forward(self, x):
        eps = self.eps
        if x.dtype != np.float64 and self.eps == np.finfo(np.float64).eps:
            eps = np.finfo(x.dtype).eps
        axes = tuple(range(x.ndim - len(self.shape), x.ndim))
        rms = np.sqrt((x ** 2).mean(axis=axes, keepdims=True))
        d = rms + eps
        self.saved = (x, rms, d, axes)
        return (x / d * self.gamma.data).astype(x.dtype)

    def backward(self, dy):
        x, rms, d, axes = self.saved
        lead = tuple(range(dy.ndim - len(self.shape)))
        self.gamma.grad += (dy * x / d).sum(axis=lead)
        g = dy * self.gamma.data
        n = np.prod([x.shape[a] for a in axes])
        s = (g * x).sum(axis=axes, keepdims=True)
        safe = np.where(rms > 0, rms, 1.0)
        dx = g / d - np.where(rms > 0, s * x / (n * safe * d ** 2), 0.0)
        return dx.astype(dy.dtype)
