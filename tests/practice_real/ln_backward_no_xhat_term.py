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
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(self.normalized_shape, dtype))
        self.beta = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, X):
        # normalise over the trailing dims given by normalized_shape
        self.axes = tuple(range(X.ndim - len(self.normalized_shape), X.ndim))
        mean = X.mean(axis=self.axes, keepdims=True)
        var = ((X - mean) ** 2).mean(axis=self.axes, keepdims=True)
        self.inv_std = 1.0 / np.sqrt(var + self.eps)
        self.X_hat = (X - mean) * self.inv_std
        return self.gamma.data * self.X_hat + self.beta.data

    def backward(self, dY):
        batch_axes = tuple(range(dY.ndim - len(self.normalized_shape)))
        self.gamma.grad += (dY * self.X_hat).sum(axis=batch_axes)
        self.beta.grad += dY.sum(axis=batch_axes)
        dX_hat = dY * self.gamma.data
        a = self.axes
        return self.inv_std * (dX_hat - dX_hat.mean(axis=a, keepdims=True))
