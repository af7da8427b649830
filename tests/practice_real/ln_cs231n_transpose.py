import numpy as np


def layernorm_forward(x, gamma, beta, ln_param):
    """x: (N, D). Same as batchnorm on x.T, with gamma/beta applied per feature."""
    eps = ln_param.get("eps", 1e-5)
    xt = x.T                                   # (D, N): the statistics run over axis 0 now
    mu = xt.mean(axis=0)
    var = xt.var(axis=0)
    std = np.sqrt(var + eps)
    xhat = ((xt - mu) / std).T                 # back to (N, D)
    out = gamma * xhat + beta
    cache = (xhat, gamma, std)
    return out, cache


def layernorm_backward(dout, cache):
    xhat, gamma, std = cache
    dgamma = np.sum(dout * xhat, axis=0)
    dbeta = np.sum(dout, axis=0)
    dxhat_t = (dout * gamma).T                 # (D, N)
    xhat_t = xhat.T
    D = dxhat_t.shape[0]
    dx_t = (D * dxhat_t - dxhat_t.sum(axis=0) - xhat_t * np.sum(dxhat_t * xhat_t, axis=0)) / (D * std)
    return dx_t.T, dgamma, dbeta


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

    def forward(self, x):
        self.shape = x.shape
        D = self.gamma.data.size
        out, self.cache = layernorm_forward(x.reshape(-1, D), self.gamma.data.reshape(-1),
                                            self.beta.data.reshape(-1), {"eps": self.eps})
        return out.reshape(x.shape)

    def backward(self, dout):
        D = self.gamma.data.size
        dx, dgamma, dbeta = layernorm_backward(dout.reshape(-1, D), self.cache)
        self.gamma.grad += dgamma.reshape(self.normalized_shape)
        self.beta.grad += dbeta.reshape(self.normalized_shape)
        return dx.reshape(self.shape)
