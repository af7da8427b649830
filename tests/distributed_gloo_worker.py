"""One process of tests/test_distributed_gloo.py: SyncBatchNorm on this rank's shard over gloo.

    python distributed_gloo_worker.py RANK WORLD_SIZE OUT.npz     (MASTER_ADDR, MASTER_PORT set)

Every rank draws the same full batch from a fixed seed and keeps its own shard; it trains two
steps, then evaluates, and saves what it computed for the parent to compare with BatchNorm.
"""

import datetime
import sys

import numpy as np
import torch.distributed as dist

from normcore.distributed import SyncBatchNorm, TorchGroup

SIZES, C, L = (5, 0, 3), 3, 4  # shard sizes per rank (the first WORLD_SIZE of them)


def data(step, world_size):
    rng = np.random.default_rng(step)
    shards = [1e4 + 10 * rng.normal(size=(n, C, L)) for n in SIZES[:world_size]]
    dys = [rng.normal(size=s.shape) for s in shards]
    return shards, dys


def main(rank, world_size, out):
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=datetime.timedelta(seconds=60))
    bn = SyncBatchNorm(C, process_group=TorchGroup())
    rng = np.random.default_rng(100)
    bn.weight.data[:], bn.bias.data[:] = rng.normal(size=C), rng.normal(size=C)
    saved = {}
    for step in range(3):
        if step == 2:
            bn.eval()
        shards, dys = data(step, world_size)
        saved[f"y{step}"] = bn(shards[rank])
        saved[f"dx{step}"] = bn.backward(dys[rank])
    saved.update(dgamma=bn.weight.grad, dbeta=bn.bias.grad, running_mean=bn.running_mean,
                 running_var=bn.running_var, rank=bn.process_group.rank)
    np.savez(out, **saved)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
