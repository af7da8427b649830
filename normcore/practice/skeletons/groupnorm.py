"""Practice: GroupNorm, forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that this layer behaves exactly like
torch.nn.GroupNorm, for input (N, C), (N, C, L) and (N, C, H, W). Then:

    normcore practice check THIS_FILE.py

The grader compares your numbers with normcore.GroupNorm on many inputs (ranks 2 to 4, one
group, one channel per group, float32, a constant group, tiny variances) and, when a check
fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own layer gives these numbers; once your
layer works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> gn = GroupNorm(2, 4)
    >>> gn.gamma.data = np.array([1.0, 2.0, 0.5, 1.0])
    >>> gn.beta.data = np.array([0.0, 0.1, -0.2, 0.0])
    >>> x = np.array([[[1.0, 2.0], [4.0, 0.0], [3.0, 1.0], [2.0, 2.0]]])
    >>> np.round(gn.forward(x), 4).tolist()
    [[[-0.5071, 0.169], [3.1425, -2.2664], [0.5071, -0.9071], [0.0, 0.0]]]
    >>> dy = np.array([[[1.0, 0.0], [-1.0, 0.5], [0.5, -0.5], [2.0, 0.0]]])
    >>> np.round(gn.backward(dy), 4).tolist()
    [[[0.2705, 0.1352], [-0.1352, -0.2704], [-0.7071, -0.7071], [2.1213, -0.7071]]]
    >>> np.round(gn.gamma.grad, 4).tolist(), np.round(gn.beta.grad, 4).tolist()
    ([-0.5071, -2.1129, 1.4142, 0.0], [1.0, -0.5, 0.0, 2.0])
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class GroupNorm:
    """Group normalisation: each sample's channels split into groups, each group standardised.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (N, C, *spatial); y has x's shape and dtype.
    - ``backward(dy) -> dx``: dL/dx for the last forward; *adds* (+=) dL/dgamma to
      ``self.gamma.grad`` and dL/dbeta to ``self.beta.grad`` (the caller zeroes them).
    - ``self.gamma``, ``self.beta``: Parameters of shape (C,), one per channel.
    - ``train()`` / ``eval()`` (GroupNorm behaves the same in both).

    Semantics are PyTorch's: which channels form a group, which variance, where eps goes.
    If you are unsure, decide, and let the grader tell you.
    """

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

    def forward(self, x):
        # TODO: group the channels (a reshape), mean and variance per (sample, group), x_hat,
        #       then y = gamma * x_hat + beta with one gamma and beta per channel.
        # TODO: cache what backward needs.
        raise NotImplementedError("TODO: GroupNorm.forward")

    def backward(self, dy):
        # TODO: dgamma and dbeta (accumulate with +=), then dx per group through x_hat, the
        #       mean and the variance.
        raise NotImplementedError("TODO: GroupNorm.backward")
