# Residual feed-forward block in the deeplearning.ai style: parameters in a dict, caches
# as tuples, linear_forward / linear_backward helpers. The ReLU's backward passes the
# gradient straight through ("relu' is 1"), the rest is right.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def linear_forward(A, W, b):
    Z = A @ W + b
    return Z, (A, W)


def linear_backward(dZ, cache):
    A, W = cache
    n_in, n_out = W.shape
    dW = A.reshape(-1, n_in).T @ dZ.reshape(-1, n_out)
    db = dZ.reshape(-1, n_out).sum(axis=0)
    dA = dZ @ W.T
    return dA, dW, db


def layernorm_forward(x, gamma, beta, eps):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    x_norm = (x - mu) / np.sqrt(var + eps)
    return gamma * x_norm + beta, (x_norm, var, eps, gamma)


def layernorm_backward(dout, cache):
    x_norm, var, eps, gamma = cache
    C = dout.shape[-1]
    dgamma = np.sum((dout * x_norm).reshape(-1, C), axis=0)
    dbeta = np.sum(dout.reshape(-1, C), axis=0)
    dxn = dout * gamma
    dx = (1.0 / np.sqrt(var + eps)) * (dxn - np.mean(dxn, axis=-1, keepdims=True)
                                       - x_norm * np.mean(dxn * x_norm, axis=-1, keepdims=True))
    return dx, dgamma, dbeta


def ffn_forward(h, p):
    Z1, c1 = linear_forward(h, p["W1"], p["b1"])
    A1 = np.maximum(0, Z1)
    Z2, c2 = linear_forward(A1, p["W2"], p["b2"])
    return Z2, (c1, Z1, c2)


def ffn_backward(dZ2, cache):
    c1, Z1, c2 = cache
    dA1, dW2, db2 = linear_backward(dZ2, c2)
    dZ1 = dA1
    dh, dW1, db1 = linear_backward(dZ1, c1)
    return dh, {"W1": dW1, "b1": db1, "W2": dW2, "b2": db2}


class TransformerBlock:
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post"):
            raise ValueError(position)
        self.position, self.eps = position, eps
        rng = np.random.default_rng(rng)
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff))
        self.b2 = Parameter(np.zeros(d_model))

    def params(self):
        return {"W1": self.w1.data, "b1": self.b1.data, "W2": self.w2.data, "b2": self.b2.data}

    def forward(self, x):
        if self.position == "pre":
            h, self.ln_cache = layernorm_forward(x, self.gamma.data, self.beta.data, self.eps)
            f, self.ff_cache = ffn_forward(h, self.params())
            return x + f
        f, self.ff_cache = ffn_forward(x, self.params())
        y, self.ln_cache = layernorm_forward(x + f, self.gamma.data, self.beta.data, self.eps)
        return y

    def _accumulate(self, grads, dgamma, dbeta):
        self.w1.grad += grads["W1"]
        self.b1.grad += grads["b1"]
        self.w2.grad += grads["W2"]
        self.b2.grad += grads["b2"]
        self.gamma.grad += dgamma
        self.beta.grad += dbeta

    def backward(self, dy):
        if self.position == "pre":
            dh, grads = ffn_backward(dy, self.ff_cache)
            dx_ln, dgamma, dbeta = layernorm_backward(dh, self.ln_cache)
            self._accumulate(grads, dgamma, dbeta)
            return dy + dx_ln
        dz, dgamma, dbeta = layernorm_backward(dy, self.ln_cache)
        dxf, grads = ffn_backward(dz, self.ff_cache)
        self._accumulate(grads, dgamma, dbeta)
        return dz + dxf
