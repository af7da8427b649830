import numpy as np


class Parameter:
    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        self.C = num_features
        self.eps = eps
        self.momentum = momentum
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0
        self.training = True

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        self.x_hat = np.zeros_like(x)
        self.std = np.zeros(self.C)
        y = np.zeros_like(x)
        if self.training:
            self.num_batches_tracked += 1
        m = self.momentum if self.momentum is not None else 1.0 / max(self.num_batches_tracked, 1)
        for c in range(self.C):
            xc = x[:, c]  # (N,) or (N, L)
            if self.training:
                mean = xc.mean()
                var = xc.var(ddof=1)  # sample variance
                self.running_mean[c] = (1 - m) * self.running_mean[c] + m * mean
                self.running_var[c] = (1 - m) * self.running_var[c] + m * var
            else:
                mean, var = self.running_mean[c], self.running_var[c]
            self.std[c] = np.sqrt(var + self.eps)
            self.x_hat[:, c] = (xc - mean) / self.std[c]
            y[:, c] = self.gamma.data[c] * self.x_hat[:, c] + self.beta.data[c]
        return y

    def backward(self, dy):
        dx = np.zeros_like(dy)
        for c in range(self.C):
            d = dy[:, c]
            xh = self.x_hat[:, c]
            self.gamma.grad[c] += np.sum(d * xh)
            self.beta.grad[c] += np.sum(d)
            dxh = d * self.gamma.data[c]
            if self.training:
                dx[:, c] = (dxh - dxh.mean() - xh * np.mean(dxh * xh)) / self.std[c]
            else:
                dx[:, c] = dxh / self.std[c]
        return dx
