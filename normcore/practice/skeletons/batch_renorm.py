"""Practice: BatchRenorm1d (Batch Renormalization), forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
Batch Renormalization (Ioffe, 2017) with BatchNorm's running statistics as
torch.nn.BatchNorm1d keeps them. In training the batch's statistics are corrected towards
the running ones (sigma = sqrt(running_var + eps)):

    r = clip(sigma_B / sigma, 1 / r_max, r_max)
    d = clip((mean_B - running_mean) / sigma, -d_max, d_max)
    y = gamma * ((x - mean_B) / sigma_B * r + d) + beta

with r and d held constant in the backward, and the running statistics updated as
BatchNorm's. In evaluation the layer is BatchNorm's. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.BatchRenorm1d on many inputs (channels where
r and d are clipped and where they are not, several training steps, rank 3, float32, other
r_max, d_max and momentum, evaluation) and, when a check fails, names the well-known
mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> brn = BatchRenorm1d(2, r_max=2.0, d_max=1.0)
    >>> brn.gamma.data = np.array([1.0, 2.0])
    >>> brn.beta.data = np.array([0.0, 0.5])
    >>> x = np.array([[1.0, 4.0], [3.0, -4.0], [2.0, 6.0], [6.0, 2.0]])
    >>> np.round(brn.forward(x), 4).tolist()
    [[-1.0, 4.6381], [1.0, -3.9143], [0.0, 6.7762], [4.0, 2.5]]
    >>> np.round(brn.running_mean, 4).tolist(), np.round(brn.running_var, 4).tolist()
    ([0.3, 0.2], [1.3667, 2.7667])
    >>> dy = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 2.0], [0.5, -1.0]])
    >>> np.round(brn.backward(dy), 4).tolist()
    [[0.9464, -0.6109], [-0.125, 0.7636], [-1.0893, 1.4508], [0.2679, -1.6036]]
    >>> np.round(brn.gamma.grad, 4).tolist(), np.round(brn.beta.grad, 4).tolist()
    ([1.0, 3.069], [0.5, 2.0])
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchRenorm1d:
    """Batch renormalization of input (N, C) or (N, C, L), one mean and variance per channel.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (N, C) or (N, C, L); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dgamma and
      dL/dbeta to ``self.gamma.grad`` and ``self.beta.grad`` (the caller zeroes them).
    - ``self.gamma``, ``self.beta``: Parameters of shape (C,).
    - ``self.running_mean``, ``self.running_var``: arrays of shape (C,), updated in training
      with ``momentum`` as BatchNorm's are (``momentum=None``: the plain average of all
      batches so far).
    - ``train()`` / ``eval()``.

    Which statistics go where (r and d, the running update), and what the backward does with
    r and d, is part of the task. If you are unsure, decide, and let the grader tell you.
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
        # TODO: in training, the batch's mean and biased variance, r and d (clipped), the
        # TODO: output, then the running statistics; in evaluation, the running statistics.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: BatchRenorm1d.forward")

    def backward(self, dy):
        # TODO: dgamma and dbeta (accumulate with +=), then dx with r and d held constant.
        raise NotImplementedError("TODO: BatchRenorm1d.backward")
