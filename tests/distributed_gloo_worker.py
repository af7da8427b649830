"""One process of tests/test_distributed_gloo.py: SyncBatchNorm on this rank's shard over gloo.

    python distributed_gloo_worker.py RANK WORLD_SIZE OUT.npz     (MASTER_ADDR, MASTER_PORT set)

Every rank draws the same full batch from a fixed seed and keeps its own shard; with each
protocol it trains two steps, then evaluates, counting its collectives, and saves what it
computed for the parent to compare with BatchNorm. It also tries torch.nn.SyncBatchNorm on a
CPU tensor in training and saves what happened.
"""

import datetime
import sys

import numpy as np
import torch
import torch.distributed as dist

from counting_group import Counting
from normcore.distributed import SyncBatchNorm, TorchGroup

SIZES, C, L = (5, 0, 3), 3, 4  # shard sizes per rank (the first WORLD_SIZE of them)
PROTOCOLS = ("allreduce", "gather")


def data(step, world_size):
    rng = np.random.default_rng(step)
    shards = [1e4 + 10 * rng.normal(size=(n, C, L)) for n in SIZES[:world_size]]
    dys = [rng.normal(size=s.shape) for s in shards]
    return shards, dys


def parameters():
    rng = np.random.default_rng(100)
    return rng.normal(size=C), rng.normal(size=C)


def train_and_evaluate(protocol, rank, world_size):
    """Two training steps and one evaluation step of SyncBatchNorm with ``protocol`` on this
    rank's shards: what it computed, and its collectives counted after each step."""
    group = Counting(TorchGroup())
    bn = SyncBatchNorm(C, process_group=group, protocol=protocol)
    bn.weight.data[:], bn.bias.data[:] = parameters()
    saved = {}
    for step in range(3):
        if step == 2:
            bn.eval()
        shards, dys = data(step, world_size)
        saved[f"y{step}"] = bn(shards[rank])
        saved[f"dx{step}"] = bn.backward(dys[rank])
        saved[f"counts{step}"] = [group.counts["all_reduce"], group.counts["all_gather"]]
    saved.update(dgamma=bn.weight.grad, dbeta=bn.bias.grad, running_mean=bn.running_mean,
                 running_var=bn.running_var, rank=bn.process_group.rank)
    return {f"{protocol}_{key}": value for key, value in saved.items()}


def torch_syncbatchnorm_on_cpu(x):
    """torch.nn.SyncBatchNorm in training on this rank's CPU float64 shard: "ran", or its error."""
    layer = torch.nn.SyncBatchNorm(C, dtype=torch.float64)
    try:
        layer(torch.from_numpy(x))
    except (ValueError, RuntimeError, NotImplementedError) as err:
        return f"{type(err).__name__}: {err}"
    return "ran"


def main(rank, world_size, out):
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=60))
    saved = {}
    for protocol in PROTOCOLS:
        saved.update(train_and_evaluate(protocol, rank, world_size))
    saved["torch_syncbatchnorm_cpu"] = torch_syncbatchnorm_on_cpu(data(0, world_size)[0][rank])
    np.savez(out, **saved)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
