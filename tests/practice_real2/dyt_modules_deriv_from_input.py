# DyT built from tiny reusable modules (Scale, Tanh, Affine), each with forward/backward,
# chained by a small container: the object-heavy style.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class Module:
    def parameters(self):
        return [v for v in vars(self).values() if isinstance(v, Parameter)]


class Scale(Module):
    def __init__(self, alpha):
        self.alpha = alpha

    def forward(self, x):
        self.x = x
        return self.alpha.data * x

    def backward(self, dy):
        self.alpha.grad += np.sum(dy * self.x).reshape(1)
        return dy * self.alpha.data


class Tanh(Module):
    def forward(self, u):
        self.u = u
        return np.tanh(u)

    def backward(self, dt):
        return dt * (1 - self.u ** 2)


class Affine(Module):
    def __init__(self, gamma, beta, n_norm):
        self.gamma, self.beta, self.n_norm = gamma, beta, n_norm

    def forward(self, t):
        self.t = t
        return self.gamma.data * t + self.beta.data

    def backward(self, dy):
        lead = tuple(range(dy.ndim - self.n_norm))
        self.gamma.grad += (dy * self.t).sum(lead)
        self.beta.grad += dy.sum(lead)
        return dy * self.gamma.data


class DyT(Module):
    def __init__(self, normalized_shape, alpha_init=0.5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.training = True
        self.alpha = Parameter(np.full(1, alpha_init, dtype))
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))
        self.layers = [Scale(self.alpha), Tanh(), Affine(self.gamma, self.beta, len(self.normalized_shape))]

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        for layer in self.layers:
            x = layer.forward(x)
        return x

    def backward(self, dy):
        for layer in reversed(self.layers):
            dy = layer.backward(dy)
        return dy
