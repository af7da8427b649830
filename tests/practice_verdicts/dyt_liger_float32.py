"""Liger-Kernel's DyT (liger_kernel/ops/dyt.py), ported to the NumPy skeleton: the kernels
load x, alpha, gamma and beta as float32, compute tanh and every gradient in float32 and
accumulate dalpha and dgamma in float32, then store in the input's dtype."""

import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class DyT:
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True,
                 dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        f32 = np.float32
        xf, a = x.astype(f32), self.alpha.data.astype(f32)
        g, b = self.gamma.data.astype(f32), self.beta.data.astype(f32)
        t = np.tanh(a * xf)
        self.cache = (xf, t, x.dtype)
        return (g * t + b).astype(x.dtype)

    def backward(self, dy):
        xf, t, dtype = self.cache
        f32 = np.float32
        dyf = dy.astype(f32)
        lead = tuple(range(dy.ndim - len(self.normalized_shape)))
        a, g = self.alpha.data.astype(f32), self.gamma.data.astype(f32)
        du = dyf * g * (f32(1) - t * t)
        self.alpha.grad += np.sum(du * xf, dtype=f32).astype(self.alpha.grad.dtype)
        self.gamma.grad += np.sum(dyf * t, axis=lead, dtype=f32).astype(self.gamma.grad.dtype)
        self.beta.grad += np.sum(dyf, axis=lead, dtype=f32).astype(self.beta.grad.dtype)
        return (a * du).astype(dtype)
