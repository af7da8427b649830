"""Practice: SyncBatchNorm (BatchNorm1d across workers), forward and backward, by hand in NumPy.

The task
--------
Fill in ``forward`` and ``backward`` (the TODOs) so that K workers, each calling its own
replica of this layer on its own shard x_k of the batch (n_k rows; the workers' n_k may
differ, and may be 0), each get exactly what BatchNorm1d gives on the concatenated batch:
the same mean and variance (of all N = sum_k n_k rows), the same running statistics. In the
backward each gets dx for its own rows. The only communication is

    total = self.group.all_reduce(vector)    # vector: a float64 1-D array, the same length on
                                             # every worker; total: the SUM over the workers

which every worker must call the same number of times, in the same order (each call waits
for all K). Use it twice in the forward (or once, if you know a numerically stable one-round
formula). Use it once in the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs K workers as threads (normcore.distributed.InProcessGroup) on shards of a
batch, uneven ones, one empty, with a mean of 1e5, and compares the concatenated outputs and
each worker's running statistics with normcore.BatchNorm1d on the whole batch. It compares
dx and each worker's gradients too. When a check fails it names the well-known mistake that
produces exactly your numbers. NumPy only here (normcore is only the grader's test bench):
do not import normcore or torch.

A worked example with a group of ONE worker (then SyncBatchNorm is BatchNorm1d), to 4
decimals (normcore's own layer gives these numbers; once your layer works, ``python -m
doctest THIS_FILE.py`` checks them):

    >>> class OneWorker:                    # all_reduce over one worker returns its own vector
    ...     rank, world_size = 0, 1
    ...     def all_reduce(self, vector):
    ...         return vector.copy()
    >>> bn = SyncBatchNorm(2, process_group=OneWorker())
    >>> x = np.array([[1.0, 2.0], [3.0, -2.0], [5.0, 0.0]])
    >>> np.round(bn.forward(x), 4).tolist()
    [[-1.2247, 1.2247], [0.0, -1.2247], [1.2247, 0.0]]
    >>> np.round(bn.backward(np.array([[1.0, 0.5], [0.0, 1.0], [-2.0, 2.0]])), 4).tolist()
    [[-0.1021, -0.2552], [0.2041, -0.2552], [-0.1021, 0.5103]]
    >>> np.round(bn.running_var, 4).tolist()
    [1.3, 1.3]

Then try it by hand with two workers:

    import normcore.distributed as ncd
    group = ncd.InProcessGroup(2, verbose=True)        # prints every message
    bns = [SyncBatchNorm(3, process_group=w) for w in group.workers]
    ys = group.run(lambda w, x: bns[w.rank].forward(x), [x0, x1])
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape)."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


class SyncBatchNorm:
    """BatchNorm1d over a batch split across the workers of ``process_group``.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x this worker's shard, shape (n_k, C), float64; y the same shape.
      In training the statistics are those of the whole batch; in evaluation the running
      statistics, with no communication.
    - ``backward(dy) -> dx``: dy and dx this worker's rows; *adds* (+=) to ``self.gamma.grad``
      and ``self.beta.grad`` this worker's LOCAL shares, sum over its rows of dy * x_hat and
      of dy (their sum over the workers is BatchNorm's gradient; data-parallel training
      all-reduces parameter gradients afterwards, as PyTorch does).
    - ``self.gamma``, ``self.beta``: Parameters of shape (C,); ``running_mean``,
      ``running_var`` arrays of shape (C,), updated with ``momentum`` as BatchNorm1d does
      (running_var with the unbiased variance of the whole batch); ``train()`` / ``eval()``.
    - ``self.group``: ``rank``, ``world_size`` and ``all_reduce(vector)``.
    """

    def __init__(self, num_features, process_group, eps=1e-5, momentum=0.1):
        self.group = process_group
        self.eps, self.momentum = eps, momentum
        self.training = True
        self.gamma = Parameter(np.ones(num_features))
        self.beta = Parameter(np.zeros(num_features))
        self.running_mean = np.zeros(num_features)
        self.running_var = np.ones(num_features)

    def train(self, mode=True):
        self.training = mode
        return self

    def eval(self):
        return self.train(False)

    def forward(self, x):
        # TODO: evaluation: the running statistics, no communication.
        # TODO: training: the global count and mean (all_reduce), then the global variance,
        # TODO: x_hat, y, the running statistics; cache what backward needs.
        raise NotImplementedError("TODO: SyncBatchNorm.forward")

    def backward(self, dy):
        # TODO: the local sums of dy and dy * x_hat (add them to the gradients), their global
        # TODO: sums (all_reduce), then dx for this worker's rows.
        raise NotImplementedError("TODO: SyncBatchNorm.backward")
