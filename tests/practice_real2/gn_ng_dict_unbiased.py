# GroupNorm in the deeplearning.ai assignment style: forward/backward helpers that pass
# a cache tuple around, parameters kept in a dict, the class a thin wrapper.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def groupnorm_forward(x, parameters, G, eps):
    """
    Arguments:
    x -- input data, numpy array of shape (m, C, ...)
    parameters -- python dictionary containing "gamma" and "beta", each of shape (C,)
    Returns:
    out -- normalized output, same shape as x
    cache -- tuple of values needed in the backward pass
    """
    m, C = x.shape[0], x.shape[1]
    x_g = x.reshape(m, G, -1)
    n = x_g.shape[2]
    mu = np.mean(x_g, axis=2, keepdims=True)
    var = np.sum((x_g - mu) ** 2, axis=2, keepdims=True) / (n - 1)
    x_norm = ((x_g - mu) / np.sqrt(var + eps)).reshape(x.shape)
    bshape = (1, C) + (1,) * (x.ndim - 2)
    out = parameters["gamma"].reshape(bshape) * x_norm + parameters["beta"].reshape(bshape)
    cache = (x_norm, var, eps, n, bshape, parameters)
    return out, cache


def groupnorm_backward(dout, cache, G):
    x_norm, var, eps, n, bshape, parameters = cache
    m = dout.shape[0]
    axes = (0,) + tuple(range(2, dout.ndim))
    grads = {"dgamma": np.sum(dout * x_norm, axis=axes), "dbeta": np.sum(dout, axis=axes)}
    dx_norm = (dout * parameters["gamma"].reshape(bshape)).reshape(m, G, -1)
    xn = x_norm.reshape(m, G, -1)
    inv_std = 1.0 / np.sqrt(var + eps)
    dx = inv_std * (dx_norm - np.sum(dx_norm, axis=2, keepdims=True) / n
                    - xn * np.sum(dx_norm * xn, axis=2, keepdims=True) / (n - 1))
    grads["dx"] = dx.reshape(dout.shape)
    return grads


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype))
        self.beta = Parameter(np.zeros(num_channels, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        parameters = {"gamma": self.gamma.data, "beta": self.beta.data}
        out, self.cache = groupnorm_forward(x, parameters, self.num_groups, self.eps)
        return out

    def backward(self, dy):
        grads = groupnorm_backward(dy, self.cache, self.num_groups)
        self.gamma.grad += grads["dgamma"]
        self.beta.grad += grads["dbeta"]
        return grads["dx"]
