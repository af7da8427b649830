"""SyncBatchNorm across two real processes (torch.distributed, gloo on localhost), with either
protocol, equals BatchNorm on the concatenated batch to 1e-12 in float64: normcore's and
torch's. torch.nn.SyncBatchNorm itself refuses CPU tensors (torch 2.13), so it is not compared."""

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


def torch_batchnorm_steps():
    """torch.nn.BatchNorm1d (float64) on the concatenated batches: two training steps, then
    evaluation, as the workers ran them; its outputs, dx, and then its accumulated gradients and
    running statistics."""
    bn = torch.nn.BatchNorm1d(worker.C, dtype=torch.float64)
    gamma, beta = worker.parameters()
    with torch.no_grad():
        bn.weight.copy_(torch.from_numpy(gamma))
        bn.bias.copy_(torch.from_numpy(beta))
    ys, dxs = [], []
    for step in range(3):
        if step == 2:
            bn.eval()
        shards, dys = worker.data(step, WORLD_SIZE)
        x = torch.from_numpy(np.concatenate(shards)).requires_grad_()
        y = bn(x)
        y.backward(torch.from_numpy(np.concatenate(dys)))
        ys.append(y.detach().numpy())
        dxs.append(x.grad.numpy())
    return ys, dxs, dict(dgamma=bn.weight.grad.numpy(), dbeta=bn.bias.grad.numpy(),
                         running_mean=bn.running_mean.numpy(), running_var=bn.running_var.numpy())


def normcore_batchnorm_steps():
    """normcore's BatchNorm1d on the concatenated batches, the same three steps."""
    bn = nc.BatchNorm1d(worker.C)
    bn.weight.data[:], bn.bias.data[:] = worker.parameters()
    ys, dxs = [], []
    for step in range(3):
        if step == 2:
            bn.eval()
        shards, dys = worker.data(step, WORLD_SIZE)
        ys.append(bn(np.concatenate(shards)))
        dxs.append(bn.backward(np.concatenate(dys)))
    return ys, dxs, dict(dgamma=bn.weight.grad, dbeta=bn.bias.grad, running_mean=bn.running_mean,
                         running_var=bn.running_var)


@pytest.mark.parametrize("protocol", worker.PROTOCOLS)
@pytest.mark.parametrize("reference", [normcore_batchnorm_steps, torch_batchnorm_steps],
                         ids=["normcore BatchNorm1d", "torch BatchNorm1d"])
def test_two_gloo_processes_equal_batchnorm_on_the_concatenation(results, protocol, reference):
    ys, dxs, final = reference()
    assert [int(r[f"{protocol}_rank"]) for r in results] == list(range(WORLD_SIZE))
    for step in range(3):
        assert nc.rel_error(np.concatenate([r[f"{protocol}_y{step}"] for r in results]), ys[step]) < 1e-12
        assert nc.rel_error(np.concatenate([r[f"{protocol}_dx{step}"] for r in results]), dxs[step]) < 1e-12
    for name in ("dgamma", "dbeta"):  # each process holds its local share; their sum is the whole batch's
        assert nc.rel_error(sum(r[f"{protocol}_{name}"] for r in results), final[name]) < 1e-12
    for r in results:
        for name in ("running_mean", "running_var"):
            assert nc.rel_error(r[f"{protocol}_{name}"], final[name]) < 1e-12


@pytest.mark.parametrize("protocol, per_step", [("allreduce", [3, 0]), ("gather", [1, 1])])
def test_the_collectives_over_gloo_counted(results, protocol, per_step):
    """[all_reduce, all_gather] calls after each step: per training step three all-reduces, or
    one all_gather and one all_reduce; the evaluation step sends nothing."""
    for r in results:
        assert [list(r[f"{protocol}_counts{step}"]) for step in range(3)] == \
            [per_step, [2 * c for c in per_step], [2 * c for c in per_step]]


def test_torch_syncbatchnorm_refuses_cpu_tensors(results):
    """What the README says: torch.nn.SyncBatchNorm synchronises GPU (and XPU, HPU...) tensors
    only. In training across these gloo processes, a CPU tensor raises before any message."""
    for r in results:
        message = str(r["torch_syncbatchnorm_cpu"])
        assert message.startswith("ValueError") and "GPU" in message, message


def test_torchgroup_needs_an_initialised_process_group():
    from normcore.distributed import TorchGroup
    if torch.distributed.is_initialized():
        pytest.skip("a process group is already initialised in this process")
    with pytest.raises(RuntimeError, match="init_process_group"):
        TorchGroup()
