"""A process group whose all_reduce and all_gather autograd can differentiate: SyncBatchNorm in PyTorch.

A worker of ``normcore.distributed.InProcessGroup`` sums float64 NumPy vectors across the
workers (threads). A PyTorch SyncBatchNorm answer writes its forward only, so the sum it asks
for must carry a gradient: ``AutogradGroup(worker).all_reduce(tensor)`` returns the sum over
the workers as a tensor of the caller's shape and dtype, and its backward is the same
all-reduce of the gradient. That is the chain rule: every worker's sum depends on every
worker's tensor with slope 1, so the gradient reaching worker k's tensor is the sum of the
gradients at every worker's output. Each worker's autograd backward runs in its own thread
and meets the others at these all-reduces, in the reverse order of the forward's, so
``y.backward(dy)`` on every worker gives what torch.nn.SyncBatchNorm's backward gives.
``all_gather(tensor)`` stacks every worker's tensor in rank order; worker k's tensor reaches
row k of every worker's result, so its gradient is the sum over the workers of their row k's
gradient: the backward all-reduces the gradient of the whole stack and keeps this worker's row.
torch is imported here: this module is loaded only for a PyTorch answer.
"""

import torch


def _summed(worker, tensor):
    """The sum over the workers of ``tensor`` (any shape), in its shape and dtype."""
    vector = tensor.detach().to(torch.float64).reshape(-1).cpu().numpy().copy()
    return torch.from_numpy(worker.all_reduce(vector)).reshape(tensor.shape).to(tensor.dtype)


class _AllReduce(torch.autograd.Function):
    """Sum across the workers; backward: the sum across the workers of the gradient."""

    @staticmethod
    def forward(ctx, tensor, worker):
        ctx.worker = worker
        return _summed(worker, tensor)

    @staticmethod
    def backward(ctx, grad):
        return _summed(ctx.worker, grad), None


def _gathered(worker, tensor):
    """Every worker's ``tensor`` (one shape on all), stacked in rank order: (K, *shape), its dtype."""
    vector = tensor.detach().to(torch.float64).reshape(-1).cpu().numpy().copy()
    rows = torch.from_numpy(worker.all_gather(vector))
    return rows.reshape((worker.world_size, *tensor.shape)).to(tensor.dtype)


class _AllGather(torch.autograd.Function):
    """Every worker's tensor, stacked; backward: this worker's row of the summed gradients."""

    @staticmethod
    def forward(ctx, tensor, worker):
        ctx.worker = worker
        return _gathered(worker, tensor)

    @staticmethod
    def backward(ctx, grad):
        return _summed(ctx.worker, grad)[ctx.worker.rank], None


class AutogradGroup:
    """``rank``, ``world_size``, a differentiable ``all_reduce(tensor)`` (the SUM) and
    ``all_gather(tensor)`` (every worker's, stacked) for one worker of a NumPy process group
    (an InProcessGroup's worker)."""

    def __init__(self, worker):
        self.worker, self.rank, self.world_size = worker, worker.rank, worker.world_size

    def all_reduce(self, tensor):
        """The sum over every worker of its ``tensor`` (the same shape on every worker)."""
        if not torch.is_tensor(tensor):
            raise TypeError(f"all_reduce expects a torch.Tensor, got {type(tensor).__name__}")
        return _AllReduce.apply(tensor, self.worker)

    def all_gather(self, tensor):
        """Every worker's ``tensor`` (the same shape on every worker), stacked in rank order:
        shape (world_size, *tensor.shape)."""
        if not torch.is_tensor(tensor):
            raise TypeError(f"all_gather expects a torch.Tensor, got {type(tensor).__name__}")
        return _AllGather.apply(tensor, self.worker)

    def __repr__(self):
        return f"AutogradGroup(rank={self.rank}, world_size={self.world_size})"
