"""Practice: SyncBatchNorm (BatchNorm1d across workers) in PyTorch, the forward of a
torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that K workers, each calling its own replica of this module
on its own shard x_k of the batch (n_k rows; the workers' n_k may differ, and may be 0), each
get exactly what torch.nn.BatchNorm1d gives on the concatenated batch: the same mean and
variance (of all N = sum_k n_k rows), the same running statistics. The only communication is

    total = self.group.all_reduce(tensor)    # tensor: the same shape on every worker;
                                             # total: the SUM over the workers (tensor is
                                             # left unchanged: unlike torch.distributed's
                                             # all_reduce, the sum is what it returns)

which every worker must call the same number of times, in the same order (each call waits for
all K). Autograd does the backward: the group's all_reduce is differentiable (its backward
all-reduces the gradient), so dx and the weight's and bias's gradients come out as
torch.nn.SyncBatchNorm's would. Then:

    normcore practice check THIS_FILE.py

The grader runs K workers as threads (normcore.distributed.InProcessGroup, each worker's
all_reduce made differentiable by normcore.practice.torch_track.group.AutogradGroup) on shards
of a batch, uneven ones, one empty, with a mean of 1e5, and compares the concatenated outputs
and dx, each worker's gradients and running statistics with normcore.BatchNorm1d on the whole
batch; it checks the module itself against the track's torch answer (parameters, buffers and
state_dict keys, buffers without autograd history) and, when a check fails, names the
well-known mistake that produces exactly your numbers. Write it from tensor operations: no
normcore, and not torch.nn.functional.batch_norm.

A worked example with two workers, to 4 decimals (the reference answer gives these numbers,
and so does torch.nn.BatchNorm1d on the three rows; once your module works,
``python -m doctest THIS_FILE.py`` checks them):

    >>> from normcore.distributed import InProcessGroup
    >>> from normcore.practice.torch_track.group import AutogradGroup
    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> group = InProcessGroup(2)
    >>> bns = [SyncBatchNorm(2, process_group=AutogradGroup(w)) for w in group.workers]
    >>> list(bns[0].state_dict())
    ['weight', 'bias', 'running_mean', 'running_var', 'num_batches_tracked']
    >>> shards = [torch.tensor([[1.0, 2.0], [3.0, -1.0]], requires_grad=True),
    ...           torch.tensor([[0.0, 4.0]], requires_grad=True)]
    >>> dys = [torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([[0.5, -1.0]])]  # dL/dy
    >>> def step(worker, x, dy):              # runs on every worker together, one thread each
    ...     y = bns[worker.rank](x)
    ...     y.backward(dy)
    ...     return y.detach().round(decimals=4).tolist()
    >>> group.run(step, shards, dys)
    [[[-0.2673, 0.1622], [1.3363, -1.2978]], [[-1.069, 1.1355]]]
    >>> [x.grad.round(decimals=4).tolist() for x in shards]
    [[[0.3436, 0.064], [-0.1145, -0.0256]], [[-0.2291, -0.0384]]]
    >>> bns[1].running_var.round(decimals=4).tolist()
    [1.1333, 1.5333]
    >>> bns[0].weight.grad.round(decimals=4).tolist()  # worker 0's local share
    [-0.2673, -1.2978]
"""

import torch
from torch import nn


class SyncBatchNorm(nn.Module):
    """BatchNorm1d over a batch split across the workers of ``process_group``; input (n_k, C).

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (n_k, C), n_k >= 0; y of the same shape and dtype.
    - ``self.group.all_reduce(tensor)``: the only way to see the other workers' rows;
      ``self.group.rank`` and ``self.group.world_size`` are there too.
    - ``self.weight``, ``self.bias``: nn.Parameters of shape (C,) (PyTorch's names; their
      ``.grad`` is this worker's local share, as autograd gives it).
    - ``self.running_mean``, ``self.running_var``, ``self.num_batches_tracked``: buffers,
      updated in training with ``momentum`` as BatchNorm1d does; evaluation (``eval()``) uses
      the running statistics and sends no messages.

    Semantics are PyTorch's: which variance normalises, which one running_var gets, and with
    which count. If you are unsure, decide, and let the grader tell you.
    """

    def __init__(self, num_features, process_group=None, eps=1e-5, momentum=0.1):
        super().__init__()
        self.group = process_group
        self.eps, self.momentum = eps, momentum
        self.weight = nn.Parameter(torch.ones(num_features))
        self.bias = nn.Parameter(torch.zeros(num_features))
        self.register_buffer("running_mean", torch.zeros(num_features))
        self.register_buffer("running_var", torch.ones(num_features))
        self.register_buffer("num_batches_tracked", torch.tensor(0, dtype=torch.long))

    def forward(self, x):
        # TODO: evaluation: the running statistics, no messages.
        # TODO: training: the global count, mean and variance through self.group.all_reduce
        # TODO: (which variance is stable when the mean is 1e5?), the running statistics
        # TODO: (without autograd history), then y = weight * x_hat + bias.
        raise NotImplementedError("TODO: SyncBatchNorm.forward")
