# A residual block from small layer objects; the backward returns the branch's gradient
# (the skip connection's own share of dx left out).
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class Linear:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def forward(self, x):
        self.x = x
        return x @ self.w.data + self.b.data

    def backward(self, dy):
        C_in, C_out = self.w.data.shape
        self.w.grad += self.x.reshape(-1, C_in).T @ dy.reshape(-1, C_out)
        self.b.grad += dy.reshape(-1, C_out).sum(0)
        return dy @ self.w.data.T


class ReLU:
    def forward(self, x):
        self.mask = x > 0
        return x * self.mask

    def backward(self, dy):
        return dy * self.mask


class LayerNorm:
    def __init__(self, gamma, beta, eps):
        self.gamma, self.beta, self.eps = gamma, beta, eps

    def forward(self, x):
        mu = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = (x - mu) * self.rstd
        return self.xhat * self.gamma.data + self.beta.data

    def backward(self, dy):
        C = dy.shape[-1]
        self.gamma.grad += (dy * self.xhat).reshape(-1, C).sum(0)
        self.beta.grad += dy.reshape(-1, C).sum(0)
        g = dy * self.gamma.data
        return self.rstd * (g - g.mean(-1, keepdims=True)
                            - self.xhat * (g * self.xhat).mean(-1, keepdims=True))


class Sequential:
    def __init__(self, *layers):
        self.layers = layers

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, dy):
        for layer in reversed(self.layers):
            dy = layer.backward(dy)
        return dy


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
        self.ln = LayerNorm(self.gamma, self.beta, eps)
        self.ff = Sequential(Linear(self.w1, self.b1), ReLU(), Linear(self.w2, self.b2))

    def forward(self, x):
        if self.position == "pre":
            return x + self.ff.forward(self.ln.forward(x))
        return self.ln.forward(x + self.ff.forward(x))

    def backward(self, dy):
        if self.position == "pre":
            return self.ln.backward(self.ff.backward(dy))
        dz = self.ln.backward(dy)
        return self.ff.backward(dz)
