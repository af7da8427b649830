"""BatchNorm1d written with einsum sums and in-place updates of the layer's own buffers.

Every input is viewed as (N, C, L) (L = 1 for a 2-D input), so one code path serves both.
"""
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.track_running_stats = track_running_stats
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype)) if affine else None
        self.beta = Parameter(np.zeros(num_features, dtype)) if affine else None
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _update_running(self, mean, var_unbiased):
        self.num_batches_tracked += 1
        if self.momentum is None:
            w = 1.0 / self.num_batches_tracked
        else:
            w = self.momentum
        self.running_mean *= 1.0 - w
        self.running_mean += w * mean
        self.running_var *= 1.0 - w
        self.running_var += w * var_unbiased

    def forward(self, x):
        self.in_shape = x.shape
        x3 = x.reshape(x.shape[0], x.shape[1], -1)
        n = x3.shape[0] * x3.shape[2]
        if self.training:
            mean = np.einsum("ncl->c", x3) / n
            xc = x3 - mean[None, :, None]
            var = np.einsum("ncl,ncl->c", xc, xc) / n
            self._update_running(mean, var * (n / (n - 1)) if n > 1 else var)
        else:
            mean, var = self.running_mean, self.running_var
            xc = x3 - mean[None, :, None]
        rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = np.einsum("ncl,c->ncl", xc, rstd)
        self.rstd = rstd
        y = np.einsum("ncl,c->ncl", self.xhat, self.gamma.data) + self.beta.data[None, :, None]
        return y.reshape(self.in_shape)

    def backward(self, dy):
        dy3 = dy.reshape(self.xhat.shape)
        n = dy3.shape[0] * dy3.shape[2]
        self.gamma.grad += np.einsum("ncl,ncl->c", dy3, self.xhat)
        self.beta.grad += np.einsum("ncl->c", dy3)
        dxhat = np.einsum("ncl,c->ncl", dy3, self.gamma.data)
        if self.training:
            s1 = np.einsum("ncl->c", dxhat) / n
            s2 = np.einsum("ncl,ncl->c", dxhat, self.xhat) / n
            dxhat = dxhat - s1[None, :, None] - self.xhat * s2[None, :, None]
        dx = np.einsum("ncl,c->ncl", dxhat, self.rstd)
        return dx.reshape(self.in_shape)
