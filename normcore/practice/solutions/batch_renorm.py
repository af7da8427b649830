"""BatchRenorm1d, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as Batch Renormalization (Ioffe, 2017) with BatchNorm's
running statistics as torch.nn.BatchNorm1d keeps them: the batch's mean and standard
deviation are corrected towards the running ones by r and d, which are clipped and then held
constant in the backward (a stop-gradient: no gradient goes through them); evaluation is
BatchNorm's.

A name in brackets at the end of a line, such as ``[r]``, names that step for the catalog of
mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchRenorm1d:
    """Batch renormalization of input (N, C) or (N, C, L), one mean and variance per channel.

    Training, B = every axis but the channel axis 1 (n values per channel), sigma the
    running standard deviation::

        mean, var = mean_B(x), mean_B((x - mean)**2)            (biased)
        sigma_B = sqrt(var + eps),  sigma = sqrt(running_var + eps)
        r = clip(sigma_B / sigma, 1 / r_max, r_max)             a constant in the backward
        d = clip((mean - running_mean) / sigma, -d_max, d_max)  a constant in the backward
        x_hat = (x - mean) / sigma_B
        y     = gamma * (x_hat * r + d) + beta

    then the running statistics are updated as BatchNorm's, with the batch's own mean and
    unbiased variance (r and d were computed with the running statistics before the update).
    Evaluation: y = gamma * (x - running_mean) / sigma + beta.

    Backward in training, r and d constants::

        dgamma = sum_B(dy * (x_hat * r + d)),  dbeta = sum_B(dy)
        dx_hat = dy * gamma * r
        dx     = (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat)) / sigma_B

    that is BatchNorm's backward with dx_hat scaled by r; in evaluation, dx = dy * gamma / sigma.
    Unclipped, x_hat * r + d equals (x - running_mean) / sigma, whose derivative is
    dy * gamma / sigma: that is what differentiating through r and d gives, and what Batch
    Renorm does not want.
    """

    def __init__(self, num_features, r_max=3.0, d_max=5.0, eps=1e-5, momentum=0.1, dtype=np.float64):
        self.num_features = num_features
        self.r_max, self.d_max = r_max, d_max
        self.eps = eps
        self.momentum = momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features, dtype))
        self.beta = Parameter(np.zeros(num_features, dtype))
        self.running_mean = np.zeros(num_features, dtype)
        self.running_var = np.ones(num_features, dtype)
        self.num_batches_tracked = 0

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        axes = (0,) + tuple(range(2, x.ndim))          # every axis but the channel axis
        view = (1, -1) + (1,) * (x.ndim - 2)           # (1, C) or (1, C, 1)
        gamma, beta = self.gamma.data.reshape(view), self.beta.data.reshape(view)
        running_mean = self.running_mean.reshape(view)                  # (1, C, 1)
        sigma = np.sqrt(self.running_var.reshape(view) + self.eps)      # (1, C, 1)
        if not self.training:  # the running statistics, r = 1 and d = 0 [eval]
            x_hat = (x - running_mean) / sigma                          # (N, C, L)
            self.cache = (x_hat, sigma, sigma, 1.0, 0.0, False)
            return (gamma * x_hat + beta).astype(x.dtype)
        mean = x.mean(axis=axes, keepdims=True)                         # (1, C, 1)
        var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)          # (1, C, 1) biased
        sigma_B = np.sqrt(var + self.eps)                               # (1, C, 1)
        r = np.clip(sigma_B / sigma, 1 / self.r_max, self.r_max)        # (1, C, 1) [r]
        d = np.clip((mean - running_mean) / sigma, -self.d_max, self.d_max)  # (1, C, 1) [d]
        x_hat = (x - mean) / sigma_B                                    # (N, C, L)
        self.cache = (x_hat, sigma_B, sigma, r, d, True)
        n = x.size // self.num_features
        self.num_batches_tracked += 1
        m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum  # [momentum]
        self.running_mean = (1 - m) * self.running_mean + m * mean.ravel()  # [running-mean]
        self.running_var = (1 - m) * self.running_var + m * var.ravel() * n / (n - 1)  # [running-var]
        return (gamma * (x_hat * r + d) + beta).astype(x.dtype)

    def backward(self, dy):
        x_hat, sigma_B, sigma, r, d, batch_stats = self.cache
        view = (1, -1) + (1,) * (dy.ndim - 2)
        axes = (0,) + tuple(range(2, dy.ndim))
        self.gamma.grad += (dy * (x_hat * r + d)).sum(axis=axes)        # (C,) [dgamma]
        self.beta.grad += dy.sum(axis=axes)                             # (C,)
        dx_hat = dy * self.gamma.data.reshape(view) * r                 # (N, C, L) r a constant [dx-hat]
        if not batch_stats:  # evaluation: the running statistics are constants
            return (dx_hat / sigma).astype(dy.dtype)
        mean_dx_hat = dx_hat.mean(axis=axes, keepdims=True)                    # (1, C, 1)
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)    # (1, C, 1)
        dx = (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat) / sigma_B      # (N, C, L) [dx]
        return dx.astype(dy.dtype)
