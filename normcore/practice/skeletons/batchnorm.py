"""Practice: BatchNorm1d, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
torch.nn.BatchNorm1d, for input (N, C) and (N, C, L), in training and in evaluation. Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.BatchNorm1d on many inputs (several shapes,
float32, a batch of 2, a constant channel, tiny variances, running statistics over several
steps, eval mode) and, when a check fails, names the well-known mistake that produces exactly
your numbers. NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> bn = BatchNorm1d(2, momentum=0.1)
    >>> bn.gamma.data = np.array([1.0, 2.0])
    >>> bn.beta.data = np.array([0.0, -1.0])
    >>> x = np.array([[1.0, 2.0], [3.0, 0.0], [2.0, 4.0], [6.0, 2.0]])
    >>> np.round(bn.forward(x), 4).tolist()
    [[-1.069, -1.0], [0.0, -3.8284], [-0.5345, 1.8284], [1.6036, -1.0]]
    >>> np.round(bn.running_mean, 4).tolist(), np.round(bn.running_var, 4).tolist()
    ([0.3, 0.2], [1.3667, 1.1667])
    >>> dy = np.array([[1.0, 0.5], [0.0, -1.0], [-1.0, 2.0], [0.5, 0.0]])
    >>> np.round(bn.backward(dy), 4).tolist()
    [[0.5059, 0.1768], [-0.0668, 0.1768], [-0.5822, 0.1768], [0.1432, -0.5303]]
    >>> np.round(bn.gamma.grad, 4).tolist(), np.round(bn.beta.grad, 4).tolist()
    ([0.2673, 4.2426], [0.5, 1.5])
    >>> _ = bn.eval()
    >>> np.round(bn.forward(x[:1]), 4).tolist()
    [[0.5988, 2.3329]]
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class BatchNorm1d:
    """Batch normalisation: each channel standardised with statistics taken over the batch.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (N, C) or (N, C, L); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dgamma to
      ``self.gamma.grad`` and dL/dbeta to ``self.beta.grad`` (the caller zeroes them).
    - ``self.gamma``, ``self.beta``: Parameters of shape (C,) (the grader sets random values).
    - ``self.training``: switched by ``train()`` / ``eval()``; in evaluation the layer uses
      ``self.running_mean`` and ``self.running_var``, which every training forward updates
      with ``momentum`` (``momentum=None``: the plain average of all batches so far).
    - ``backward`` must also work in evaluation mode.

    Semantics are PyTorch's: which variance, where eps goes, what momentum weights. If you are
    unsure, decide, and let the grader tell you.
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
        # TODO: choose the axes the statistics run over (every axis but the channel axis 1).
        # TODO: training: the batch's mean and variance, and update the running statistics;
        #       evaluation: the running statistics.
        # TODO: x_hat, then y = gamma * x_hat + beta; cache what backward needs.
        raise NotImplementedError("TODO: BatchNorm1d.forward")

    def backward(self, dy):
        # TODO: dgamma and dbeta (accumulate with +=), then dx through x_hat, the mean and the
        #       variance (training) or through x_hat only (evaluation).
        raise NotImplementedError("TODO: BatchNorm1d.backward")
