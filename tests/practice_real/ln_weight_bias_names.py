import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class LayerNorm:
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, dtype=np.float64):
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps = eps
        self.training = True
        # PyTorch names
        self.weight = Parameter(np.ones(self.normalized_shape, dtype))
        self.bias = Parameter(np.zeros(self.normalized_shape, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdims=True)
        var = x.var(dims, keepdims=True)
        self.rstd = (var + self.eps) ** -0.5
        self.xhat = (x - mean) * self.rstd
        self.dims = dims
        return self.xhat * self.weight.data + self.bias.data

    def backward(self, grad_out):
        lead = tuple(range(grad_out.ndim - len(self.normalized_shape)))
        self.weight.grad += (grad_out * self.xhat).sum(lead)
        self.bias.grad += grad_out.sum(lead)
        g = grad_out * self.weight.data
        d = self.dims
        return self.rstd * (g - g.mean(d, keepdims=True) - self.xhat * (g * self.xhat).mean(d, keepdims=True))
