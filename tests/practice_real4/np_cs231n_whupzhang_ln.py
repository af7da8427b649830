# exercise: layernorm
# Source: github.com/whu-pzhang/cs231n, assignment2/cs231n/layers.py (layernorm_forward,
# layernorm_backward: the nine numbered steps of the staged graph, along axis 1),
# commit 085254a1.
# Ported: the functions wrapped by the LayerNorm class; CS231n's layer norm takes (N, D), so
# the input (*, *normalized_shape) is flattened to (N, D) with D the product of
# normalized_shape, and gamma / beta flattened with it; the (1, D) dgamma / dbeta of the
# solution (keepdims=True, which the CS231n solver broadcasts) are reshaped to the parameters'
# shape when added.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def layernorm_forward(x, gamma, beta, ln_param):
    out, cache = None, None
    eps = ln_param.get('eps', 1e-5)
    N, D = x.shape
    mu = 1. / D * np.sum(x, axis=1, keepdims=True)              # (1)
    xsubmu = x - mu                                             # (2)
    xsubmusqr = xsubmu ** 2                                     # (3)
    var = 1. / D * np.sum(xsubmusqr, axis=1, keepdims=True)     # (4)
    varsqrt = np.sqrt(var + eps)                                # (5)
    invvarsqrt = 1. / varsqrt                                   # (6)
    x_norm = xsubmu * invvarsqrt                                # (7)
    gammax = gamma * x_norm                                     # (8)
    out = gammax + beta                                         # (9)
    cache = (mu, xsubmu, var, varsqrt,
             invvarsqrt, x_norm, gamma, beta, eps)
    return out, cache


def layernorm_backward(dout, cache):
    dx, dgamma, dbeta = None, None, None
    mu, xsubmu, var, varsqrt, invvarsqrt, x_norm, gamma, beta, eps = cache

    N, D = x_norm.shape
    dgammax = dout                                                  # (9)
    dbeta = np.sum(dout, axis=0, keepdims=True)                     # (9)
    dgamma = np.sum(dgammax * x_norm, axis=0, keepdims=True)        # (8)
    dx_norm = dgammax * gamma                                       # (8)
    dinvvarsqrt = np.sum(dx_norm * xsubmu, axis=1, keepdims=True)   # (7)
    dxsubmu = dx_norm * invvarsqrt                                  # (7)
    dvarsqrt = -dinvvarsqrt * varsqrt**(-2)                         # (6)
    dvar = dvarsqrt * 0.5 * (var + eps) ** (-0.5)                   # (5)
    dxsubmusqr = dvar * 1. / D * np.ones((N, D))                    # (4)
    dxsubmu += dxsubmusqr * 2.0 * xsubmu                            # (3)
    dx = dxsubmu                                                    # (2)
    dmu = -np.sum(dxsubmu, axis=1, keepdims=True)                   # (2)
    dx += dmu * 1. / D * np.ones((N, D))                            # (1)
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
        self.shape = x.shape
        D = int(np.prod(self.normalized_shape))
        out, self.cache = layernorm_forward(x.reshape(-1, D), self.gamma.data.reshape(-1),
                                            self.beta.data.reshape(-1), {'eps': self.eps})
        return out.reshape(self.shape)

    def backward(self, dout):
        D = int(np.prod(self.normalized_shape))
        dx, dgamma, dbeta = layernorm_backward(dout.reshape(-1, D), self.cache)
        self.gamma.grad += dgamma.reshape(self.normalized_shape)
        self.beta.grad += dbeta.reshape(self.normalized_shape)
        return dx.reshape(self.shape)
