# GroupNorm, "backprop ninja" style: every intermediate gets its own name and its own
# gradient, written out line by line the way you'd do it on a whiteboard.
import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        assert num_channels % num_groups == 0
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.training = True
        self.gamma = Parameter(np.ones(num_channels, dtype))
        self.beta = Parameter(np.zeros(num_channels, dtype))

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        N, C = x.shape[:2]
        G = self.num_groups
        xg = x.reshape(N, G, -1)                     # (N, G, M): a group's channels and positions
        M = xg.shape[-1]
        bnmeani = 1.0 / M * xg.sum(-1, keepdims=True)
        bndiff = xg - bnmeani
        bndiff2 = bndiff ** 2
        bnvar = 1.0 / M * bndiff2.sum(-1, keepdims=True)   # biased, like torch
        bnvar_inv = (bnvar + self.eps) ** -0.5
        bnraw = (bndiff * bnvar_inv).reshape(x.shape)
        shape = (1, C) + (1,) * (x.ndim - 2)
        out = self.gamma.data.reshape(shape) * bnraw + self.beta.data.reshape(shape)
        self.cache = (x.shape, M, bndiff, bnvar_inv, bnraw, shape)
        return out

    def backward(self, dout):
        xshape, M, bndiff, bnvar_inv, bnraw, shape = self.cache
        N, C = xshape[:2]
        G = self.num_groups
        axes = (0,) + tuple(range(2, len(xshape)))
        self.gamma.grad += (dout * bnraw).sum(axes)
        self.beta.grad += dout.sum(axes)
        dbnraw = (dout * self.gamma.data.reshape(shape)).reshape(N, G, -1)
        # bnraw = bndiff * bnvar_inv
        dbndiff = dbnraw * bnvar_inv
        dbnvar_inv = (dbnraw * bndiff).sum(-1, keepdims=True)
        dbnvar = -0.5 * (bnvar_inv ** 3) * dbnvar_inv
        dbndiff2 = np.ones_like(bndiff) / M * dbnvar
        dbndiff += 2 * bndiff * dbndiff2
        dxg = dbndiff.copy()
        dbnmeani = -dbndiff.sum(-1, keepdims=True)
        dxg += np.ones_like(bndiff) / M * dbnmeani
        return dxg.reshape(xshape)
