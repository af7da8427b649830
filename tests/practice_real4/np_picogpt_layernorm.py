# exercise: layernorm
# Source: github.com/jaymody/picoGPT, gpt2.py, layer_norm(x, g, b, eps: float = 1e-5):
# mean and variance over the last axis, (x - mean) / sqrt(variance + eps), g * x + b.
# Ported: the function wrapped by the LayerNorm class, g / b the contract's gamma / beta, the
# constructor's eps passed to it. picoGPT is inference only: the backward added is the exact
# derivative of layer_norm over the same (last) axis, as its author would write it.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    x = (x - mean) / np.sqrt(variance + eps)  # normalize x to have mean=0 and var=1 over last axis
    return g * x + b  # scale and offset with gamma/beta params


def layer_norm_backward(dout, x, g, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    rstd = 1 / np.sqrt(variance + eps)
    x_hat = (x - mean) * rstd
    lead = tuple(range(x.ndim - g.ndim))
    dg = np.sum(dout * x_hat, axis=lead)
    db = np.sum(dout, axis=lead)
    dx_hat = dout * g
    dx = rstd * (dx_hat - dx_hat.mean(-1, keepdims=True) - x_hat * (dx_hat * x_hat).mean(-1, keepdims=True))
    return dx, dg, db


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

    def forward(self, x):
        self.x = x
        return layer_norm(x, self.gamma.data, self.beta.data, eps=self.eps)

    def backward(self, dout):
        dx, dg, db = layer_norm_backward(dout, self.x, self.gamma.data, eps=self.eps)
        self.gamma.grad += dg
        self.beta.grad += db
        return dx
