"""Test fixture: a correct RMSNorm written as x * rsqrt, with the backward in the
"x minus its projection" form and eps=None resolved at each call. The grader must pass it.
"""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class RMSNorm:
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, dtype=np.float64):
        self.shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.weight = Parameter(np.ones(self.shape, dtype))

    def forward(self, x):
        axes = tuple(range(x.ndim - len(self.shape), x.ndim))
        eps = self.eps if self.eps is not None else np.finfo(x.dtype).eps
        r = 1.0 / np.sqrt(np.mean(np.square(x), axis=axes, keepdims=True) + eps)
        self.saved = (x, r, axes)
        return (x * r * self.weight.data).astype(x.dtype)

    def backward(self, dy):
        x, r, axes = self.saved
        d = int(np.prod(self.shape))
        lead = tuple(range(dy.ndim - len(self.shape)))
        self.weight.grad += np.sum(dy * x * r, axis=lead)
        g = dy * self.weight.data
        proj = np.sum(g * x, axis=axes, keepdims=True) / d
        return (r * g - r ** 3 * x * proj).astype(dy.dtype)
