"""One process of tests/test_distributed_gloo.py: SyncBatchNorm on this rank's shard over gloo.

    python distributed_gloo_worker.py RANK WORLD_SIZE OUT     (MASTER_ADDR, MASTER_PORT set)

The parts run one after the other in the same process group, each saving what it found in
OUT_<part>.npz as soon as it is done (a part that kills the process leaves the earlier ones):

- "collectives": TorchGroup's all_reduce and all_gather, and the caller's array afterwards.
- "recalibration": recalibrate_batchnorm on SyncBatchNorm replicas, each rank its own batches.
- "steps": every rank draws the same full batch from a fixed seed and keeps its own shard; with
  each protocol it trains two steps, then evaluates, counting its collectives. It also tries
  torch.nn.SyncBatchNorm on a CPU tensor in training and saves what happened.
- "disagreements": ranks whose layers or shards do not fit together; the error each raised,
  then one ordinary step (the group is still in step).
"""

import datetime
import sys

import numpy as np
import torch
import torch.distributed as dist

from counting_group import Counting
import normcore as nc
from normcore.distributed import SyncBatchNorm, TorchGroup

SIZES, C, L = (5, 0, 3), 3, 4  # shard sizes per rank (the first WORLD_SIZE of them)
PROTOCOLS = ("allreduce", "gather")
GLOO_TIMEOUT = 30  # seconds a collective may wait for the other rank
# what each disagreement case gives ranks 0 and 1: (num_features, shard shape, shard dtype)
DISAGREEMENTS = {"channels": [(3, (2, 3), np.float64), (4, (2, 4), np.float64)],
                 "width": [(3, (2, 3), np.float64), (3, (2, 5), np.float64)],
                 "dtype": [(3, (2, 3), np.float64), (3, (2, 3), np.float32)]}


def collectives(rank):
    """TorchGroup's all_reduce and all_gather of v = [rank + 1] * 3: what they return, and v after."""
    group = TorchGroup()
    v = np.full(3, rank + 1.0)
    reduced = group.all_reduce(v)
    after_reduce = v.copy()
    gathered = group.all_gather(v)
    return dict(reduced=reduced, after_reduce=after_reduce, gathered=gathered, after_gather=v)


def recalibration_model(make_bn):
    """Linear(4, C) -> BN(C) -> ReLU -> Linear(C, 2) -> BN(2), the same weights whatever the BN."""
    rng = np.random.default_rng(20)
    model = nc.Sequential(nc.Linear(4, C, init="torch", rng=rng), make_bn(C), nc.ReLU(),
                          nc.Linear(C, 2, init="torch", rng=rng), make_bn(2))
    for bn in (model[1], model[4]):
        bn.weight.data[...] = rng.normal(1, 0.5, bn.num_features)
        bn.bias.data[...] = rng.normal(0, 0.5, bn.num_features)
    return model


def calibration_batches(rank):
    """Rank ``rank``'s three batches (one of rank 0's is empty), around a mean of its own."""
    rng = np.random.default_rng(30 + rank)
    return [rng.normal(2 + 3 * rank, 3, (n, 4)) for n in ((4, 0, 3), (2, 5, 1))[rank]]


def recalibration(rank):
    """The running statistics of this rank's replica after recalibrate_batchnorm, per protocol."""
    saved = {}
    for protocol in PROTOCOLS:
        model = recalibration_model(lambda c, p=protocol: SyncBatchNorm(c, process_group=TorchGroup(), protocol=p))
        nc.recalibrate_batchnorm(model, calibration_batches(rank))
        for k in (1, 4):
            saved[f"{protocol}_{k}_running_mean"] = model[k].running_mean
            saved[f"{protocol}_{k}_running_var"] = model[k].running_var
    return saved


def disagreements(rank):
    """Each case's error on this rank ("ValueError: ..."), then one ordinary step's output."""
    saved = {}
    for case, ranks in DISAGREEMENTS.items():
        channels, shape, dtype = ranks[rank]
        try:
            SyncBatchNorm(channels, process_group=TorchGroup())(np.ones(shape, dtype))
            saved[case] = "ran"
        except Exception as err:  # noqa: BLE001  the parent compares the ranks' errors
            saved[case] = f"{type(err).__name__}: {err}"
    shards, _ = data(0, 2)
    saved["after"] = SyncBatchNorm(C, process_group=TorchGroup())(shards[rank])
    return saved


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


def steps(rank, world_size):
    saved = {}
    for protocol in PROTOCOLS:
        saved.update(train_and_evaluate(protocol, rank, world_size))
    saved["torch_syncbatchnorm_cpu"] = torch_syncbatchnorm_on_cpu(data(0, world_size)[0][rank])
    return saved


def main(rank, world_size, out):
    dist.init_process_group("gloo", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=GLOO_TIMEOUT))
    parts = {"collectives": lambda: collectives(rank), "recalibration": lambda: recalibration(rank),
             "steps": lambda: steps(rank, world_size), "disagreements": lambda: disagreements(rank)}
    for part, run in parts.items():
        np.savez(f"{out}_{part}.npz", **run())
    dist.destroy_process_group()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
