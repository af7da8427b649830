"""SyncBatchNorm across two real processes (torch.distributed, gloo on localhost), with either
protocol, equals BatchNorm on the concatenated batch to 1e-12 in float64: normcore's and
torch's. torch.nn.SyncBatchNorm itself refuses CPU tensors (torch 2.13), so it is not compared.
The same two processes (started once for the module, see distributed_gloo_worker.py) also
check TorchGroup's collectives, recalibration through the group, and ranks that disagree."""

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

WORLD_SIZE, TIMEOUT = 2, 90  # seconds for both processes, then they are killed


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def processes(tmp_path_factory):
    """Start the two processes once for the module and wait for them (at most TIMEOUT s): their
    return codes and output, and where each saved its parts (``part``)."""
    tmp = tmp_path_factory.mktemp("gloo")
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    outs = [tmp / f"rank{r}" for r in range(WORLD_SIZE)]
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
    return dict(returncodes=[p.returncode for p in procs], logs=logs, outs=outs)


def part(processes, name):
    """What every rank saved for part ``name``, or a failure with the processes' output."""
    files = [Path(f"{out}_{name}.npz") for out in processes["outs"]]
    if not all(f.exists() for f in files):
        pytest.fail(f"the processes stopped before part {name!r} was saved "
                    f"(return codes {processes['returncodes']}):\n" + "\n".join(processes["logs"]))
    return [dict(np.load(f)) for f in files]


@pytest.fixture(scope="module")
def results(processes):
    return part(processes, "steps")


def test_both_processes_exit_normally(processes):
    """No rank aborted (SIGABRT inside gloo is return code -6) or raised out of a part."""
    assert processes["returncodes"] == [0] * WORLD_SIZE, "\n".join(processes["logs"])


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


@pytest.mark.parametrize("protocol, per_step", [("allreduce", [4, 0]), ("gather", [2, 1])])
def test_the_collectives_over_gloo_counted(results, protocol, per_step):
    """[all_reduce, all_gather] calls after each step: per training step the agreement's
    all_reduce, then three all-reduces, or one all_gather and one all_reduce; the evaluation step
    sends nothing."""
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


@pytest.mark.parametrize("case", list(worker.DISAGREEMENTS))
def test_ranks_that_disagree_both_raise_the_same_clear_error(processes, case):
    """Ranks whose layers differ in num_features, or one of whose shards has the wrong width or
    dtype: both raise the same ValueError, naming each rank's layer and input, and neither is
    left waiting; the next step, on shards that fit, runs on both."""
    saved = part(processes, "disagreements")
    errors = [str(r[case]) for r in saved]
    assert errors[0] == errors[1], errors
    assert errors[0].startswith("ValueError: SyncBatchNorm: before sending any data the 2 workers"), errors[0]
    for rank, (channels, shape, dtype) in enumerate(worker.DISAGREEMENTS[case]):
        assert (f"worker {rank}: SyncBatchNorm({channels}, protocol='allreduce'), input "
                f"{np.dtype(dtype).name} of shape {shape}") in errors[0]
    assert [r["after"].shape for r in saved] == [(5, worker.C, worker.L), (0, worker.C, worker.L)]


def test_torchgroup_all_reduce_and_all_gather_leave_the_callers_array_alone(processes):
    """v = [rank + 1] * 3 on each rank: all_reduce returns the sum [3, 3, 3] and all_gather the
    rows [1, 1, 1], [2, 2, 2], while v still holds the rank's own values."""
    for rank, r in enumerate(part(processes, "collectives")):
        assert np.array_equal(r["reduced"], np.full(3, 3.0))
        assert np.array_equal(r["after_reduce"], np.full(3, rank + 1.0)), "all_reduce changed its argument"
        assert np.array_equal(r["gathered"], [np.full(3, 1.0), np.full(3, 2.0)])
        assert np.array_equal(r["after_gather"], np.full(3, rank + 1.0)), "all_gather changed its argument"


@pytest.mark.parametrize("protocol", worker.PROTOCOLS)
def test_recalibration_through_the_group_gives_both_replicas_the_statistics_of_all_the_data(processes, protocol):
    """Each rank recalibrates its SyncBatchNorm replica on its own batches; both end with the
    running statistics of the plain model recalibrated on the two ranks' batches concatenated."""
    plain = worker.recalibration_model(nc.BatchNorm1d)
    batches = [worker.calibration_batches(rank) for rank in range(WORLD_SIZE)]
    nc.recalibrate_batchnorm(plain, [np.concatenate(step) for step in zip(*batches)])
    for r in part(processes, "recalibration"):
        for k in (1, 4):
            assert nc.rel_error(r[f"{protocol}_{k}_running_mean"], plain[k].running_mean) < 1e-12
            assert nc.rel_error(r[f"{protocol}_{k}_running_var"], plain[k].running_var) < 1e-12
