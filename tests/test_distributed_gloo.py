"""SyncBatchNorm across two real processes (torch.distributed, gloo on localhost) equals
BatchNorm on the concatenated batch to 1e-12 in float64."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import normcore as nc

pytest.importorskip("torch", reason="the gloo test needs PyTorch (torch.distributed)")
import torch.distributed  # noqa: E402

if not torch.distributed.is_available():
    pytest.skip("this PyTorch build has no torch.distributed", allow_module_level=True)

sys.path.insert(0, str(Path(__file__).parent))
import distributed_gloo_worker as worker  # noqa: E402

pytestmark = pytest.mark.slow  # starts two processes that join a gloo process group

WORLD_SIZE, TIMEOUT = 2, 120  # seconds for both processes, then they are killed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gloo")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    outs = [tmp / f"rank{r}.npz" for r in range(WORLD_SIZE)]
    procs = [subprocess.Popen([sys.executable, worker.__file__, str(r), str(WORLD_SIZE), str(outs[r])],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for r in range(WORLD_SIZE)]
    logs = []
    try:
        for p in procs:
            logs.append(p.communicate(timeout=TIMEOUT)[0])
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
            p.wait()
        pytest.fail(f"the {WORLD_SIZE} gloo processes did not finish within {TIMEOUT} s")
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    return [dict(np.load(o)) for o in outs]


def test_two_gloo_processes_equal_batchnorm_on_the_concatenation(results):
    bn = nc.BatchNorm1d(worker.C)
    rng = np.random.default_rng(100)
    bn.weight.data[:], bn.bias.data[:] = rng.normal(size=worker.C), rng.normal(size=worker.C)
    assert [int(r["rank"]) for r in results] == list(range(WORLD_SIZE))
    for step in range(3):
        if step == 2:
            bn.eval()
        shards, dys = worker.data(step, WORLD_SIZE)
        y, dx = bn(np.concatenate(shards)), bn.backward(np.concatenate(dys))
        assert nc.rel_error(np.concatenate([r[f"y{step}"] for r in results]), y) < 1e-12
        assert nc.rel_error(np.concatenate([r[f"dx{step}"] for r in results]), dx) < 1e-12
    assert nc.rel_error(sum(r["dgamma"] for r in results), bn.weight.grad) < 1e-12
    assert nc.rel_error(sum(r["dbeta"] for r in results), bn.bias.grad) < 1e-12
    for r in results:
        assert nc.rel_error(r["running_mean"], bn.running_mean) < 1e-12
        assert nc.rel_error(r["running_var"], bn.running_var) < 1e-12


def test_torchgroup_needs_an_initialised_process_group():
    from normcore.distributed import TorchGroup
    if torch.distributed.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        TorchGroup()
