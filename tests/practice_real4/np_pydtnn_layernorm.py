# exercise: layernorm
# Source: PyDTNN (Python Distributed Training of Neural Networks, Universitat Jaume I),
# pydtnn/backends/cpu/layers/layer_normalization.py, class LayerNormalizationCPU (forward,
# backward; the version with `if self.need_dx:`).
# Ported: the layer's axis is the last len(normalized_shape) axes; epsilon is the contract's
# eps; the computed self.dgamma / self.dbeta are added into gamma.grad / beta.grad (PyDTNN's
# optimizer reads them from the layer); need_dx is always true. Kept: dgamma and dbeta summed
# over axis 0 only.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.axis = tuple(range(-len(self.normalized_shape), 0))
        self.epsilon = eps
        self.need_dx = True
        self.training = True
        self.gamma_p = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta_p = Parameter(np.zeros(self.normalized_shape, dtype))

    @property
    def gamma(self):
        return self.gamma_p

    @property
    def beta(self):
        return self.beta_p

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        mu = np.mean(x, axis=self.axis, keepdims=True)
        xc = (x - mu)
        var = np.mean(xc ** 2, axis=self.axis, keepdims=True)

        self.std = np.sqrt(var + self.epsilon)
        self.xn = xc / self.std
        y = self.gamma_p.data * self.xn + self.beta_p.data

        return y

    def backward(self, dy):
        self.dgamma = np.sum(dy * self.xn, axis=0)
        self.dbeta = np.sum(dy, axis=0)
        self.gamma_p.grad += self.dgamma
        self.beta_p.grad += self.dbeta
        if self.need_dx:
            dy = dy * self.gamma_p.data
            dx = dy - self.xn * np.mean(dy * self.xn, self.axis, keepdims=True)
            dx -= np.mean(dy, self.axis, keepdims=True)
            dx /= self.std
            return dx
