import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    """BatchNorm1d with the backward written node by node on the computational graph."""

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

    def _shape(self, x):
        # reduce over the batch and the length, broadcast (C,) as (1, C) or (1, C, 1)
        axes = (0,) if x.ndim == 2 else (0, 2)
        bshape = (1, -1) if x.ndim == 2 else (1, -1, 1)
        return axes, bshape

    def forward(self, x):
        axes, bshape = self._shape(x)
        C = x.shape[1]
        g = self.gamma.data.reshape(bshape) if self.gamma is not None else np.ones(bshape[:1] + (C,) + bshape[2:])
        b = self.beta.data.reshape(bshape) if self.beta is not None else 0.0
        if not self.training and self.track_running_stats:
            ivar = 1.0 / np.sqrt(self.running_var.reshape(bshape) + self.eps)
            xhat = (x - self.running_mean.reshape(bshape)) * ivar
            self.cache = ("eval", xhat, g, ivar)
            return (g * xhat + b).astype(x.dtype)

        m = x.size // C
        # step 1: mean
        mu = x.mean(axis=axes, keepdims=True)
        # step 2: subtract the mean
        xmu = x - mu
        # step 3: square
        sq = xmu ** 2
        # step 4: variance
        var = sq.mean(axis=axes, keepdims=True)
        # step 5: sqrt(var + eps)
        sqrtvar = np.sqrt(var + self.eps)
        # step 6: invert
        ivar = 1.0 / sqrtvar
        # step 7: normalise
        xhat = xmu * ivar
        # step 8 and 9: scale and shift
        out = g * xhat + b

        if self.training and self.track_running_stats:
            self.num_batches_tracked += 1
            f = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum
            self.running_mean = (1 - f) * self.running_mean + f * mu.reshape(-1)
            self.running_var = (1 - f) * self.running_var + f * var.reshape(-1) * m / (m - 1)
        self.cache = ("train", xhat, g, xmu, ivar, sqrtvar, var, m, axes)
        return out.astype(x.dtype)

    def backward(self, dout):
        mode, xhat, g = self.cache[:3]
        axes = (0,) if dout.ndim == 2 else (0, 2)
        if self.gamma is not None:
            self.beta.grad += dout.sum(axis=axes)
            self.gamma.grad += (dout * xhat).sum(axis=axes)
        dxhat = dout * g
        if mode == "eval":
            return (dxhat * self.cache[3]).astype(dout.dtype)
        _, _, _, xmu, ivar, sqrtvar, var, m, axes = self.cache
        # step 7 back
        divar = np.sum(dxhat * xmu, axis=axes, keepdims=True)
        dxmu1 = dxhat * ivar
        # step 6 back
        dsqrtvar = -1.0 / sqrtvar ** 2 * divar
        # step 5 back
        dvar = 0.5 / np.sqrt(var + self.eps) * dsqrtvar
        # step 4 back
        dsq = np.ones_like(dout) / m * dvar
        # step 3 back
        dxmu2 = 2 * xmu * dsq
        # step 2 back
        dx1 = dxmu1 + dxmu2
        # step 1 back
        return dx1.astype(dout.dtype)
