import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
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
        n_batch, C = x.shape[0], x.shape[1]
        cpg = C // self.num_groups
        self.x_hat = np.empty_like(x)
        self.inv_std = np.empty((n_batch, self.num_groups))
        for n in range(n_batch):
            for g in range(self.num_groups):
                block = x[n, g * cpg:(g + 1) * cpg]
                mu = block.mean()
                var = ((block - mu) ** 2).mean()
                self.inv_std[n, g] = 1.0 / np.sqrt(var + self.eps)
                self.x_hat[n, g * cpg:(g + 1) * cpg] = (block - mu) * self.inv_std[n, g]
        y = np.empty_like(x)
        for c in range(C):
            y[:, c] = self.gamma.data[c] * self.x_hat[:, c] + self.beta.data[c]
        return y

    def backward(self, dy):
        n_batch, C = dy.shape[0], dy.shape[1]
        cpg = C // self.num_groups
        dx = np.empty_like(dy)
        for c in range(C):
            self.gamma.grad[c] += np.sum(dy[:, c] * self.x_hat[:, c])
            self.beta.grad[c] += np.sum(dy[:, c])
        for n in range(n_batch):
            for g in range(self.num_groups):
                sl = slice(g * cpg, (g + 1) * cpg)
                gam = self.gamma.data[sl].reshape((-1,) + (1,) * (dy.ndim - 2))
                dxh = dy[n, sl] * gam
                xh = self.x_hat[n, sl]
                dx[n, sl] = self.inv_std[n, g] * (dxh - dxh.mean() - xh * (dxh * xh).mean())
        return dx
