# exercise: rmsnorm
# Source: github.com/likejazz/llama3.np, llama3.py, class RMSNorm (__init__(weight, eps=1e-6),
# __call__: mean of x * x over the last axis) - the NumPy LLaMA 3 inference code.
# Ported: __call__ is forward; the weight array is the contract's gamma Parameter; eps=None
# (which the source never receives) falls back to the source's own default 1e-6. The source
# is inference only: the backward added is the exact derivative of its forward, with the same
# last-axis statistics, as its author would write it.
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
        self.weight = Parameter(np.ones(self.normalized_shape, dtype))
        self.eps = 1e-6 if eps is None else eps
        self.training = True

    @property
    def gamma(self):
        return self.weight

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # (B, L, D) -> (B, L, 1)
        variance = np.mean(x * x, axis=-1, keepdims=True)
        self.x = x
        self.rstd = 1 / np.sqrt(variance + self.eps)
        x = x / np.sqrt(variance + self.eps)
        self.x_hat = x
        return self.weight.data * x

    def backward(self, dy):
        lead = tuple(range(dy.ndim - self.weight.data.ndim))
        self.weight.grad += (dy * self.x_hat).sum(axis=lead)
        dx_hat = dy * self.weight.data
        return self.rstd * (dx_hat - self.x_hat * np.mean(dx_hat * self.x_hat, axis=-1, keepdims=True))
