"""Distributed training: SyncBatchNorm over K workers of an in-process group."""

import numpy as np

from ... import distributed
from .. import references
from ...i18n import N_
from ..probes import F64
from .base import Exercise, Probe


# --- sync_batchnorm -----------------------------------------------------------------------------
SYNC_C = 3  # channels
SYNC = ("gamma", "beta")


def _workers(make, rng, k):
    """An InProcessGroup of k workers and one replica of the layer per worker, every replica
    with the same random gamma and beta."""
    group = distributed.InProcessGroup(k, timeout=10.0)
    layers = [make(SYNC_C, process_group=w) for w in group.workers]
    for name in SYNC:
        value = rng.standard_normal(SYNC_C)
        for layer in layers:
            layer.set_param(name, value)
    return group, layers


def _shards(rng, sizes, offset):
    """Worker k's shard: sizes[k] rows, standard deviation 2 around offset + 1.5 k (the workers'
    means differ, so the spread between them is part of the variance)."""
    return [rng.standard_normal((n, SYNC_C)) * 2.0 + offset + 1.5 * k for k, n in enumerate(sizes)]


def _each(group, layers, method, arrays):
    """layers[k].<method>(arrays[k]) on every worker together; the results concatenated."""
    out = group.run(lambda w, a: getattr(layers[w.rank], method)(a), arrays)
    return np.concatenate([np.asarray(o, dtype=np.float64).reshape(-1, SYNC_C) for o in out])


def _stacked(layers, method, name):
    """layer.<method>(name) of every worker's layer, one row per worker: (K, C)."""
    return np.stack([np.asarray(getattr(layer, method)(name), dtype=np.float64) for layer in layers])


def sync_probe(label, sizes, offset=0.0, steps=1, then_eval=False):
    """K = len(sizes) workers, shards of sizes[k] rows: ``steps`` training forwards, then one
    backward with a random dy. Records the concatenated forward and dx, each worker's local
    dgamma and dbeta, and each worker's running statistics; with ``then_eval`` the evaluation
    forward too."""
    def run(rec, make, rng):
        group, layers = _workers(make, rng, len(sizes))
        for _ in range(steps):
            xs = _shards(rng, sizes, offset)
            y = _each(group, layers, "forward", xs)
        rec("forward (the shards concatenated)", y, F64)
        dys = [rng.standard_normal(x.shape) for x in xs]
        for layer in layers:
            layer.zero_grad(SYNC)
        rec("dx (the shards concatenated)", _each(group, layers, "backward", dys), F64)
        for name in SYNC:
            rec(f"d{name} of each worker (its local share)", _stacked(layers, "grad", name), F64)
        for stat in ("mean", "var"):
            rec(f"running_{stat} of each worker", _stacked(layers, "running", stat), F64)
        if then_eval:
            for layer in layers:
                layer.eval()
            rec("eval: forward", _each(group, layers, "forward", _shards(rng, sizes, offset)), F64)
    return Probe(label, run)


def sync_accumulation(rec, make, rng):
    """Two backward calls after one forward: each worker's gradients must be their sum."""
    sizes = (3, 5)
    group, layers = _workers(make, rng, len(sizes))
    layers[0].check_accumulates(SYNC)
    xs = _shards(rng, sizes, 0.0)
    _each(group, layers, "forward", xs)
    for layer in layers:
        layer.zero_grad(SYNC)
    for _ in range(2):
        _each(group, layers, "backward", [rng.standard_normal(x.shape) for x in xs])
    for name in SYNC:
        rec(f"d{name} of each worker after two backward calls", _stacked(layers, "grad", name), F64)


SYNC_BATCHNORM = Exercise(
    "sync_batchnorm", "SyncBatchNorm", references.SyncBatchNorm,
    N_("SyncBatchNorm(num_features, process_group, eps, momentum): BatchNorm1d over shards (n_k, C) "
       "on K workers, with process_group.all_reduce (sum); local gamma/beta gradients"),
    (
        sync_probe("K=2, shards 4 + 4", (4, 4)),
        sync_probe("K=3, uneven shards 2 + 5 + 3", (2, 5, 3)),
        sync_probe("K=3, worker 1 empty: 4 + 0 + 3", (4, 0, 3)),
        sync_probe("K=4, shards of 2", (2, 2, 2, 2)),
        sync_probe("K=2, shards 3 + 5, mean ~ 1e5", (3, 5), offset=1e5),
        sync_probe("running stats, 3 steps, then eval: 2 + 6 + 4", (2, 6, 4), steps=3, then_eval=True),
        Probe("gradients accumulate, K=2, 3 + 5", sync_accumulation),
    ),
    (SYNC_C, None), (4, SYNC_C), difficulty=3, minutes=45,
)

