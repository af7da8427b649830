"""GroupNorm in float64 throughout, with einsum for every reduction; cast back at the end."""
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype)) if affine else None
        self.beta = Parameter(np.zeros(num_channels, dtype)) if affine else None

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def _grouped(self, a):
        # (N, C, *spatial) -> (N, G, C/G, S)
        n, c = a.shape[:2]
        return a.reshape(n, self.num_groups, c // self.num_groups, -1)

    def forward(self, x):
        self.shape, self.dtype = x.shape, x.dtype
        xg = self._grouped(x.astype(np.float64))
        m = xg.shape[2] * xg.shape[3]
        mean = np.einsum("ngcs->ng", xg) / m
        xc = xg - mean[:, :, None, None]
        var = np.einsum("ngcs,ngcs->ng", xc, xc) / m
        self.rstd = 1.0 / np.sqrt(var + self.eps)
        self.xhat = np.einsum("ngcs,ng->ngcs", xc, self.rstd)
        gam = self.gamma.data.astype(np.float64).reshape(self.num_groups, -1)
        bet = self.beta.data.astype(np.float64).reshape(self.num_groups, -1)
        y = np.einsum("ngcs,gc->ngcs", self.xhat, gam) + bet[None, :, :, None]
        return y.reshape(self.shape).astype(self.dtype)

    def backward(self, dy):
        dyg = self._grouped(dy.astype(np.float64))
        m = dyg.shape[2] * dyg.shape[3]
        self.gamma.grad += np.einsum("ngcs,ngcs->gc", dyg, self.xhat).reshape(-1).astype(self.gamma.grad.dtype)
        self.beta.grad += np.einsum("ngcs->gc", dyg).reshape(-1).astype(self.beta.grad.dtype)
        gam = self.gamma.data.astype(np.float64).reshape(self.num_groups, -1)
        g = np.einsum("ngcs,gc->ngcs", dyg, gam)
        a = np.einsum("ngcs->ng", g) / m
        b = np.einsum("ngcs,ngcs->ng", g, self.xhat) / m
        dx = g - a[:, :, None, None] - self.xhat * b[:, :, None, None]
        dx = np.einsum("ngcs,ng->ngcs", dx, self.rstd)
        return dx.reshape(self.shape).astype(dy.dtype)
