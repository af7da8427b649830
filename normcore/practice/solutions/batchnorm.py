"""BatchNorm1d, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.BatchNorm1d: biased variance to normalise,
unbiased variance in the running average, momentum weighting the new batch, eps inside the
square root, running statistics in evaluation.

A name in brackets at the end of a line, such as ``[batch-stats]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    """Batch normalisation of input (N, C) or (N, C, L), one mean and variance per channel.

    Forward, B = every axis but the channel axis 1 (n = N or N*L values per channel)::

        training:   mean = mean_B(x),  var = mean_B((x - mean)**2)      (biased)
                    running_mean = (1 - momentum) * running_mean + momentum * mean
                    running_var  = (1 - momentum) * running_var  + momentum * var * n / (n - 1)
        evaluation: mean = running_mean,  var = running_var
        rstd  = 1 / sqrt(var + eps)
        x_hat = (x - mean) * rstd
        y     = gamma * x_hat + beta

    Backward, dx_hat = dy * gamma::

        dgamma = sum_B(dy * x_hat),  dbeta = sum_B(dy)
        training:   dx = rstd * (dx_hat - mean_B(dx_hat) - x_hat * mean_B(dx_hat * x_hat))
        evaluation: dx = rstd * dx_hat        (the running statistics are constants)

    ``momentum=None`` makes the running statistics the plain average of every batch so far.
    """

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

    def forward(self, x):
        axes = (0,) + tuple(range(2, x.ndim))          # every axis but the channel axis
        view = (1, -1) + (1,) * (x.ndim - 2)           # (1, C) or (1, C, 1)
        batch_stats = self.training or not self.track_running_stats  # [batch-stats]
        if batch_stats:
            mean = x.mean(axis=axes, keepdims=True)                     # (1, C, 1) [mean]
            var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)      # (1, C, 1) biased [var]
        else:
            mean = self.running_mean.reshape(view)                      # (1, C, 1)
            var = self.running_var.reshape(view)                        # (1, C, 1) [eval-var]
        if self.training and self.track_running_stats:  # [update-running]
            n = x.size // self.num_features
            self.num_batches_tracked += 1
            m = 1.0 / self.num_batches_tracked if self.momentum is None else self.momentum  # [momentum]
            self.running_mean = (1 - m) * self.running_mean + m * mean.ravel()  # [running-mean]
            self.running_var = (1 - m) * self.running_var + m * var.ravel() * n / (n - 1)  # [running-var]
        rstd = 1.0 / np.sqrt(var + self.eps)                            # (1, C, 1) [rstd]
        x_hat = (x - mean) * rstd                                       # (N, C, L)
        self.cache = (x_hat, rstd, axes, view, batch_stats)
        y = x_hat
        if self.gamma is not None:  # [affine]
            y = x_hat * self.gamma.data.reshape(view) + self.beta.data.reshape(view)
        return y.astype(x.dtype)

    def backward(self, dy):
        x_hat, rstd, axes, view, batch_stats = self.cache
        dx_hat = dy                                                     # (N, C, L)
        if self.gamma is not None:
            self.gamma.grad += (dy * x_hat).sum(axis=axes)              # (C,) [dgamma]
            self.beta.grad += dy.sum(axis=axes)                         # (C,) [dbeta]
            dx_hat = dy * self.gamma.data.reshape(view)                 # (N, C, L)
        if not batch_stats:  # [eval-backward]
            return (rstd * dx_hat).astype(dy.dtype)
        mean_dx_hat = dx_hat.mean(axis=axes, keepdims=True)                    # (1, C, 1) [mean-dx-hat]
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)    # (1, C, 1) [mean-dx-hat-x-hat]
        dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)         # (N, C, L) [dx]
        return dx.astype(dy.dtype)
