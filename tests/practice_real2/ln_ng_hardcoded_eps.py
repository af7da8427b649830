# LayerNorm, deeplearning.ai style helpers; eps fixed at 1e-12 in the helper (as in BERT's
# TF code) whatever the layer was constructed with.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def layernorm_forward(x, gamma, beta, n_axes):
    axes = tuple(range(x.ndim - n_axes, x.ndim))
    eps = 1e-12
    mu = np.mean(x, axis=axes, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=axes, keepdims=True)
    x_norm = (x - mu) / np.sqrt(var + eps)
    return gamma * x_norm + beta, (x_norm, var, eps, axes)


def layernorm_backward(dout, gamma, cache):
    x_norm, var, eps, axes = cache
    lead = tuple(range(dout.ndim - len(axes)))
    dgamma = np.sum(dout * x_norm, axis=lead)
    dbeta = np.sum(dout, axis=lead)
    dxn = dout * gamma
    dx = (dxn - np.mean(dxn, axis=axes, keepdims=True)
          - x_norm * np.mean(dxn * x_norm, axis=axes, keepdims=True)) / np.sqrt(var + eps)
    return dx, dgamma, dbeta


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
        out, self.cache = layernorm_forward(x, self.gamma.data, self.beta.data, len(self.normalized_shape))
        return out

    def backward(self, dy):
        dx, dgamma, dbeta = layernorm_backward(dy, self.gamma.data, self.cache)
        self.gamma.grad += dgamma
        self.beta.grad += dbeta
        return dx
