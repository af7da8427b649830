"""Data-parallel normalization: SyncBatchNorm over a process group of workers.

In data-parallel training each of K workers holds a replica of the network and a shard of
the batch. BatchNorm on each worker alone standardises with its shard's statistics, noisy when
the shard is small (detection and segmentation fit a few images per device); SyncBatchNorm
takes the statistics of the whole batch and gives every worker exactly what BatchNorm gives on
the concatenated batch. Before any data moves the workers agree, in one small all-reduce, on
what they are about to exchange (workers that disagree all raise the same ValueError). Then, by
default, it sends two small all-reduces in the forward and one in the backward;
``protocol="gather"`` sends PyTorch's two collectives instead, one all_gather of each worker's
(mean, invstd, count) in the forward and the same all-reduce in the backward::

    import normcore.distributed as ncd
    group = ncd.InProcessGroup(4, verbose=True)            # 4 workers in this process (threads)
    bns = [ncd.SyncBatchNorm(C, process_group=w) for w in group.workers]
    ys = group.run(lambda w, x: bns[w.rank](x), shards)    # prints the agreement and the forward's two

On real processes the same layer takes ``TorchGroup()`` (torch.distributed, gloo backend on
CPU): see ``groups``. PyTorch's own ``nn.SyncBatchNorm`` synchronises CUDA, XPU, HPU and
PrivateUse1 tensors only: a CPU tensor in training across processes raises ValueError (torch 2.13).
"""

from .groups import InProcessGroup, Message, ProcessGroup, TorchGroup, Worker
from .syncbatchnorm import SyncBatchNorm

__all__ = ["InProcessGroup", "Message", "ProcessGroup", "SyncBatchNorm", "TorchGroup", "Worker"]
