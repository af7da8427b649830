"""SyncBatchNorm on an InProcessGroup equals BatchNorm on the concatenated batch (float64, 1e-12),
with either protocol: normcore's two all-reduces ("allreduce") or torch's one all_gather ("gather")."""

import copy
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, strategies as st

import normcore as nc
from normcore.distributed import InProcessGroup, SyncBatchNorm
from normcore.distributed.syncbatchnorm import SHAPE_AXES

from counting_group import Counting
from norm_tiers import suite_settings

TOL = 1e-12
PROTOCOLS = ["allreduce", "gather"]
AGREEMENT = 4 + SHAPE_AXES  # values per worker in the agreement before a training forward's data


def data_messages(log):
    """The messages that carry data: the log without the agreements that precede each forward."""
    return [m for m in log if not m.name.startswith("agreement")]


def replicas(K, C, seed=0, protocol="allreduce", **kw):
    """K SyncBatchNorm replicas on one InProcessGroup and a BatchNorm1d, all with the same random gamma, beta."""
    group = InProcessGroup(K, log=[])
    sync = [SyncBatchNorm(C, process_group=w, protocol=protocol, **kw) for w in group.workers]
    bn = nc.BatchNorm1d(C, **kw)
    rng = np.random.default_rng(seed)
    if bn.weight is not None:
        gamma, beta = rng.normal(size=C), rng.normal(size=C)
        for layer in sync + [bn]:
            layer.weight.data[:], layer.bias.data[:] = gamma, beta
    return group, sync, bn


def forward(group, sync, shards):
    return group.run(lambda w, x: sync[w.rank](x), shards)


def backward(group, sync, dys):
    return group.run(lambda w, dy: sync[w.rank].backward(dy), dys)


def shards_of(sizes, C, rest=(), offset=0.0, seed=1, spread=1.0):
    rng = np.random.default_rng(seed)
    return [offset + spread * rng.normal(size=(n, C) + rest) for n in sizes]


def reference(bn, shards, dys):
    """BatchNorm (1d, whichever rank it takes: the ranks only shape the batch axes) on the concatenation."""
    x = np.concatenate(shards)
    if x.ndim == 4:  # BatchNorm1d takes (N, C, L): the same statistics over N, H, W
        y = bn(x.reshape(x.shape[0], x.shape[1], -1)).reshape(x.shape)
        return y, bn.backward(np.concatenate(dys).reshape(y.shape[0], y.shape[1], -1)).reshape(x.shape)
    return bn(x), bn.backward(np.concatenate(dys))


def check_equal(sync, bn, ys, dxs, y, dx, tol=TOL):
    assert nc.rel_error(np.concatenate(ys), y) < tol
    assert nc.rel_error(np.concatenate(dxs), dx) < tol
    if bn.weight is not None:  # each replica holds its local share; their sum is BatchNorm's
        assert nc.rel_error(sum(s.weight.grad for s in sync), bn.weight.grad) < tol
        assert nc.rel_error(sum(s.bias.grad for s in sync), bn.bias.grad) < tol
    if bn.track_running_stats:
        for s in sync:  # every worker's running statistics are the global ones
            assert nc.rel_error(s.running_mean, bn.running_mean) < tol
            assert nc.rel_error(s.running_var, bn.running_var) < tol
            assert s.num_batches_tracked == bn.num_batches_tracked


@pytest.mark.parametrize("rest", [(), (5,), (3, 4)], ids=["(N,C)", "(N,C,L)", "(N,C,H,W)"])
@pytest.mark.parametrize("sizes", [(4, 4), (3, 0, 6, 1), (1, 1, 1)], ids=["even", "uneven+empty", "ones"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_train_steps_and_eval_equal_batchnorm_on_the_concatenation(rest, sizes, protocol):
    C = 3
    group, sync, bn = replicas(len(sizes), C, protocol=protocol)
    rng = np.random.default_rng(2)
    for step in range(3):  # three training steps, then evaluation
        shards = shards_of(sizes, C, rest, seed=step)
        dys = [rng.normal(size=s.shape) for s in shards]
        ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
        check_equal(sync, bn, ys, dxs, *reference(bn, shards, dys))
    for layer in sync + [bn]:
        layer.eval()
    shards = shards_of(sizes, C, rest, seed=9)
    dys = [rng.normal(size=s.shape) for s in shards]
    messages = len(group.log)
    ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
    check_equal(sync, bn, ys, dxs, *reference(bn, shards, dys))
    assert len(group.log) == messages, "evaluation sends no messages"


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_worker_with_zero_samples_gets_an_empty_output_and_contributes_nothing(protocol):
    C = 4
    group, sync, bn = replicas(3, C, protocol=protocol)
    shards = shards_of((5, 0, 2), C, (3,))
    dys = [np.random.default_rng(3).normal(size=s.shape) for s in shards]
    ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
    assert ys[1].shape == (0, C, 3) and dxs[1].shape == (0, C, 3)
    assert np.all(sync[1].weight.grad == 0) and np.all(sync[1].bias.grad == 0)
    count = 0 if protocol == "allreduce" else -1   # [n_k, sum x_k] or [mean_k, invstd_k, n_k]
    assert [m.sent[1][count] for m in data_messages(group.log)[:1]] == [0.0]  # its count is 0
    check_equal(sync, bn, ys, dxs, *reference(bn, shards, dys))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_shard_at_1e4_loses_nothing(protocol):
    """Offset 1e4, spread 10: the one-round sums (E[x**2] - E[x]**2) lose 6 digits; the two rounds
    none beyond the input's own (x near 1e4 is stored to 1.8e-12, 2e-13 of the spread: BatchNorm
    on the concatenation has that same limit, so a spread of 1 would agree to 3e-12 only)."""
    C = 3
    group, sync, bn = replicas(4, C, protocol=protocol)
    shards = shards_of((6, 2, 9, 3), C, (4,), offset=1e4, spread=10.0)
    dys = [np.random.default_rng(4).normal(size=s.shape) for s in shards]
    ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
    y, dx = reference(bn, shards, dys)
    check_equal(sync, bn, ys, dxs, y, dx)
    # what the test guards against: the variance from one round of [n, sum x, sum x**2]
    x = np.concatenate(shards)
    n, s, ss = x.size / C, x.sum(axis=(0, 2)), np.square(x).sum(axis=(0, 2))
    naive_var = ss / n - (s / n) ** 2
    true_var = x.var(axis=(0, 2))
    assert nc.rel_error(naive_var, true_var) > 3e-11
    if protocol == "allreduce":  # round 2's message is the squared deviations from the global mean
        assert nc.rel_error(data_messages(group.log)[1].received / n, true_var) < TOL


@pytest.mark.parametrize("kw", [dict(momentum=None), dict(affine=False), dict(eps=1e-3, momentum=0.5)])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_constructor_options_follow_batchnorm(kw, protocol):
    group, sync, bn = replicas(3, 2, protocol=protocol, **kw)
    rng = np.random.default_rng(5)
    for step in range(3):
        shards = shards_of((2, 5, 3), 2, (3,), seed=step)
        dys = [rng.normal(size=s.shape) for s in shards]
        ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
        check_equal(sync, bn, ys, dxs, *reference(bn, shards, dys))


def test_without_running_stats_evaluation_uses_each_workers_own_shard():
    """As PyTorch's SyncBatchNorm: evaluation never communicates, so with track_running_stats=False
    each worker standardises with its own shard's statistics."""
    group, sync, _ = replicas(2, 3, track_running_stats=False)
    shards = shards_of((4, 6), 3)
    ys = forward(group, sync, shards)
    check = [nc.BatchNorm1d(3, track_running_stats=False) for _ in shards]
    for layer in sync + check:
        layer.eval()
    for s, c in zip(sync, check):
        c.weight.data[:], c.bias.data[:] = s.weight.data, s.bias.data
    ys_eval = forward(group, sync, shards)
    for y_eval, c, x in zip(ys_eval, check, shards):
        assert nc.rel_error(y_eval, c(x)) < TOL
    assert nc.rel_error(np.concatenate(ys), np.concatenate(ys_eval)) > 1e-3  # not the global statistics
    assert len(data_messages(group.log)) == 2 and len(group.log) == 3


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_worker_is_batchnorm(protocol):
    group, sync, bn = replicas(1, 3, protocol=protocol)
    x = shards_of((7,), 3, (2,))
    dy = [np.random.default_rng(6).normal(size=x[0].shape)]
    ys, dxs = forward(group, sync, x), backward(group, sync, dy)
    check_equal(sync, bn, ys, dxs, *reference(bn, x, dy), tol=1e-14)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_gradcheck_on_one_worker(protocol):
    layer = SyncBatchNorm(3, process_group=InProcessGroup(1).workers[0], protocol=protocol)
    rng = np.random.default_rng(7)
    layer.weight.data[:], layer.bias.data[:] = rng.normal(size=3), rng.normal(size=3)
    assert nc.gradcheck(layer, rng.normal(size=(5, 3, 2))).passed


@pytest.mark.parametrize("layout", ["fortran", "transposed", "sliced"])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_memory_layouts(layout, protocol):
    base = np.random.default_rng(8).normal(size=(6, 3, 8))
    x = {"fortran": np.asfortranarray(base), "transposed": base.transpose(2, 1, 0).copy().transpose(2, 1, 0),
         "sliced": np.random.default_rng(8).normal(size=(12, 3, 8))[::2]}[layout]
    group, sync, bn = replicas(2, 3, protocol=protocol)
    shards, dys = [x[:2], x[2:]], [np.ones((2, 3, 8)), np.arange(96.0).reshape(4, 3, 8) % 5]
    ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
    check_equal(sync, bn, ys, dxs, *reference(bn, [np.ascontiguousarray(s) for s in shards], dys))


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-6), (np.float16, 1e-3)])
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_low_precision_keeps_the_dtype(dtype, tol, protocol):
    group, sync, bn = replicas(2, 3, protocol=protocol)
    shards = [s.astype(dtype) for s in shards_of((3, 5), 3, (2,))]
    ys = forward(group, sync, shards)
    assert all(y.dtype == dtype for y in ys)
    assert nc.rel_error(np.concatenate(ys), bn(np.concatenate(shards))) < tol


def test_the_message_log_shows_each_round():
    C = 2
    group, sync, _ = replicas(3, C)
    shards = shards_of((2, 3, 1), C)
    forward(group, sync, shards)
    backward(group, sync, [np.ones_like(s) for s in shards])
    assert [m.index for m in group.log] == [1, 2, 3, 4]
    assert [m.nbytes for m in group.log] == [8 * 3 * AGREEMENT, 8 * (1 + C), 8 * C, 8 * 2 * C]
    assert [m.name.split(":")[0] for m in group.log] == ["agreement", "forward 1/2", "forward 2/2", "backward"]
    for m in group.log:
        assert np.array_equal(m.received, sum(m.sent))
    assert list(group.log[1].received[:1]) == [6.0]
    assert "worker 2 sends" in str(group.log[1]) and "every worker gets" in str(group.log[1])
    rows = group.log[0].received.reshape(3, AGREEMENT)  # every worker's [C, protocol, dtype, ndim, shape]
    assert rows.tolist() == [[C, 0, 3, 2, n, C, 0, 0, 0] for n in (2, 3, 1)]


def test_verbose_prints_every_message(capsys):
    group = InProcessGroup(2, verbose=True)
    sync = [SyncBatchNorm(2, process_group=w) for w in group.workers]
    forward(group, sync, shards_of((2, 2), 2))
    out = capsys.readouterr().out
    assert out.count("all_reduce #") == 3 and "24 bytes" in out and "16 bytes" in out


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_global_batch_of_one_value_raises_on_every_worker_and_changes_nothing(protocol):
    group, sync, _ = replicas(2, 3, protocol=protocol)
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        forward(group, sync, shards_of((1, 0), 3))
    for s in sync:
        assert s.num_batches_tracked == 0 and np.all(s.running_var == 1)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_an_empty_global_batch_is_counted_and_changes_no_statistics(protocol):
    group, sync, _ = replicas(2, 3, protocol=protocol)
    ys = forward(group, sync, shards_of((0, 0), 3))
    assert [y.shape for y in ys] == [(0, 3), (0, 3)]
    assert all(s.num_batches_tracked == 1 and np.all(s.running_mean == 0) for s in sync)


def errors(group, sync, shards):
    """What each worker's forward raised: (type, message), or None where it returned."""
    def attempt(worker, x):
        try:
            sync[worker.rank](x)
        except Exception as e:  # noqa: BLE001  the test compares them
            return type(e), str(e)
        return None
    return group.run(attempt, shards)


def assert_every_worker_raises_the_same(group, sync, shards, *needles):
    """Every worker raises one ValueError, the same text, that contains every needle; no data was
    sent (the log holds the agreement only) and nothing changed; the group is still in step."""
    sent, state = len(group.log), [copy.deepcopy(s.state_dict()) for s in sync]
    raised = errors(group, sync, shards)
    assert raised[0] is not None and raised[0][0] is ValueError, raised
    assert all(r == raised[0] for r in raised), raised
    for needle in needles:
        assert needle in raised[0][1], raised[0][1]
    assert [m.name.split(":")[0] for m in group.log[sent:]] == ["agreement"]
    assert all(np.array_equal(v, s.state_dict()[k]) for s, sd in zip(sync, state) for k, v in sd.items())
    return raised[0][1]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_workers_with_different_channel_counts_all_raise_the_same_error(protocol):
    group = InProcessGroup(2, log=[])
    sync = [SyncBatchNorm(C, process_group=w, protocol=protocol) for C, w in zip((3, 4), group.workers)]
    text = assert_every_worker_raises_the_same(group, sync, [np.ones((2, 3)), np.ones((2, 4))], "num_features")
    assert f"worker 0: SyncBatchNorm(3, protocol='{protocol}'), input float64 of shape (2, 3)" in text
    assert f"worker 1: SyncBatchNorm(4, protocol='{protocol}'), input float64 of shape (2, 4)" in text


def test_an_input_wrong_alike_on_every_worker_raises_batchnorms_own_error_on_every_worker():
    """The workers agree (the same layer, inputs alike), so each runs BatchNorm's input checks
    and every worker raises, with the error type that fits."""
    group, sync, _ = replicas(2, 3)
    for shards, error, needle in [([np.ones((2, 5)), np.ones((4, 5))], ValueError, "expected input with 3 channels"),
                                  ([np.ones((2, 3), int), np.ones((4, 3), int)], TypeError, "floating-point"),
                                  ([np.ones(3), np.ones(3)], ValueError, "2D or 3D or 4D or 5D")]:
        raised = errors(group, sync, shards)
        assert all(r is not None and r[0] is error and needle in r[1] for r in raised), raised


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_shard_of_the_wrong_shape_makes_every_worker_raise_the_same_error(protocol):
    """The worker with the bad shard does not raise its own error first (the others would then
    wait in a collective it never joins): every worker raises after the agreement."""
    group, sync, _ = replicas(2, 3, protocol=protocol)
    text = assert_every_worker_raises_the_same(group, sync, [np.ones((2, 3)), np.ones((2, 5))],
                                               "shape beyond the batch axis")
    assert "worker 1: SyncBatchNorm(3" in text and "float64 of shape (2, 5)" in text
    assert_every_worker_raises_the_same(group, sync, [np.ones((2, 3)), np.ones(3)], "number of dimensions",
                                        "shape (3,)")
    assert_every_worker_raises_the_same(group, sync, [np.ones((2, 3)), np.ones((2, 3), np.float32)],
                                        "dtype", "float32 of shape (2, 3)")
    assert_every_worker_raises_the_same(group, sync, [np.ones((4, 3, 2)), np.ones((2, 3, 5))],
                                        "shape beyond the batch axis")
    assert_every_worker_raises_the_same(group, sync, [None, np.ones((2, 3))], "not an array of numbers")
    assert all(y.shape == (2, 3) for y in forward(group, sync, [np.ones((2, 3)), np.zeros((2, 3))]))


def test_a_worker_that_skips_the_all_reduce_is_named():
    group, sync, _ = replicas(2, 3)
    with pytest.raises(RuntimeError, match="same all_reduce and all_gather calls"):
        group.run(lambda w, x: sync[0](x) if w.rank == 0 else None, shards_of((2, 2), 3))


def test_bad_arguments():
    with pytest.raises(TypeError, match="process_group"):
        SyncBatchNorm(3)
    with pytest.raises(TypeError, match="float64"):
        InProcessGroup(1).workers[0].all_reduce(np.ones(3, dtype=np.float32))
    with pytest.raises(ValueError, match="1-D"):
        InProcessGroup(1).workers[0].all_reduce(np.ones((2, 2)))
    with pytest.raises(ValueError, match="positive"):
        InProcessGroup(0)
    with pytest.raises(ValueError, match="one value per worker"):
        InProcessGroup(2).run(lambda w, x: x, [1, 2, 3])
    with pytest.raises(RuntimeError, match="before forward"):
        SyncBatchNorm(3, process_group=InProcessGroup(1).workers[0]).backward(np.ones((2, 3)))


def test_all_reduce_returns_a_fresh_array_to_each_worker():
    group = InProcessGroup(2)
    out = group.run(lambda w, v: w.all_reduce(v), [np.ones(2), np.full(2, 2.0)])
    assert np.array_equal(out[0], [3.0, 3.0]) and out[0] is not out[1]
    out[0][0] = 99
    assert out[1][0] == 3.0


def test_state_dict_is_batchnorms():
    group, sync, bn = replicas(2, 3)
    assert list(sync[0].state_dict()) == list(bn.state_dict())


def test_normcore_distributed_imports_without_torch():
    code = "import sys, normcore.distributed; assert 'torch' not in sys.modules, 'torch was imported'"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr


# --- the two protocols: torch's one all_gather against normcore's two all-reduces -------------

LAYOUTS = ["C", "fortran", "transposed", "sliced"]


def laid_out(a, layout):
    """The same values as ``a`` in another memory layout."""
    if layout == "fortran":
        return np.asfortranarray(a)
    if layout == "transposed":  # the axes' strides reversed
        return a.transpose(tuple(reversed(range(a.ndim)))).copy().transpose(tuple(reversed(range(a.ndim))))
    if layout == "sliced":      # every other row of a twice-as-long array
        wide = np.zeros((2 * a.shape[0],) + a.shape[1:])
        wide[::2] = a
        return wide[::2]
    return np.ascontiguousarray(a)


def run_steps(protocol, sizes, C, rest, layout, offset, spread, seed, steps=2, **kw):
    """``steps`` training steps of SyncBatchNorm replicas (forward, backward) and of BatchNorm1d
    on the concatenation; returns both sides' last outputs, dx, the summed dgamma and dbeta, the
    running statistics, and the group's message log."""
    group, sync, bn = replicas(len(sizes), C, seed=seed, protocol=protocol, **kw)
    rng = np.random.default_rng(seed)
    for _step in range(steps):
        shards = [laid_out(offset + spread * rng.normal(size=(n, C) + rest), layout) for n in sizes]
        dys = [laid_out(rng.normal(size=x.shape), layout) for x in shards]
        ys, dxs = forward(group, sync, shards), backward(group, sync, dys)
        y, dx = reference(bn, [np.ascontiguousarray(x) for x in shards], [np.ascontiguousarray(d) for d in dys])
    ours = dict(y=np.concatenate(ys), dx=np.concatenate(dxs), dgamma=sum(s.weight.grad for s in sync),
                dbeta=sum(s.bias.grad for s in sync), running_mean=sync[-1].running_mean,
                running_var=sync[-1].running_var)
    theirs = dict(y=y, dx=dx, dgamma=bn.weight.grad, dbeta=bn.bias.grad, running_mean=bn.running_mean,
                  running_var=bn.running_var)
    for s_ in sync:  # every worker holds the same running statistics
        assert np.array_equal(s_.running_mean, sync[0].running_mean)
        assert np.array_equal(s_.running_var, sync[0].running_var)
    return ours, theirs, group.log


def assert_close(a, b, tol=TOL):
    for key in a:
        assert nc.rel_error(a[key], b[key]) < tol, key


shard_sizes = st.lists(st.integers(0, 6), min_size=1, max_size=4).filter(lambda s: sum(s) >= 2)


@suite_settings(40)
@given(sizes=shard_sizes, C=st.integers(1, 3), rest=st.sampled_from([(), (3,)]),
       layout=st.sampled_from(LAYOUTS), offset=st.sampled_from([0.0, 5.0, -30.0]),
       spread=st.sampled_from([0.5, 1.0, 4.0]), momentum=st.sampled_from([0.1, None]),
       seed=st.integers(0, 2 ** 16))
def test_gather_equals_allreduce_and_batchnorm_on_unequal_shards(sizes, C, rest, layout, offset, spread,
                                                                 momentum, seed):
    """protocol="gather" equals the default protocol and BatchNorm1d on the whole batch to 1e-12
    in float64: forward, dx, dgamma, dbeta and the running statistics, over ranks with unequal
    (and empty) shards, (N, C) and (N, C, L), every memory layout."""
    args = (sizes, C, rest, layout, offset, spread, seed)
    gathered, batchnorm, log = run_steps("gather", *args, momentum=momentum)
    reduced, _, _ = run_steps("allreduce", *args, momentum=momentum)
    assert_close(gathered, batchnorm)
    assert_close(gathered, reduced)
    assert [m.op for m in log] == ["all_reduce", "all_gather", "all_reduce"] * 2


@pytest.mark.parametrize("protocol, forward_counts, backward_counts", [
    ("allreduce", {"all_reduce": 3, "all_gather": 0}, {"all_reduce": 1, "all_gather": 0}),
    ("gather", {"all_reduce": 1, "all_gather": 1}, {"all_reduce": 1, "all_gather": 0}),
])
def test_the_collectives_of_one_training_step_counted(protocol, forward_counts, backward_counts):
    """A training step: the agreement (an all_reduce of K (4 + SHAPE_AXES) values), then the
    default protocol's three all-reduces (two forward, one backward), 4C + 1 values per worker,
    received as sent; "gather" one all_gather forward and one all_reduce backward: 4C + 1 values
    sent, (2C + 1) K + 2C received. Evaluation sends nothing."""
    K, C = 3, 4
    group = InProcessGroup(K)
    counted = [Counting(w) for w in group.workers]
    sync = [SyncBatchNorm(C, process_group=c, protocol=protocol) for c in counted]
    shards = shards_of((2, 5, 1), C)
    forward(group, sync, shards)
    assert all(c.counts == forward_counts for c in counted)
    backward(group, sync, [np.ones_like(x) for x in shards])
    total = {op: forward_counts[op] + backward_counts[op] for op in forward_counts}
    assert all(c.counts == total for c in counted)
    received = 4 * C + 1 if protocol == "allreduce" else (2 * C + 1) * K + 2 * C
    sent = {"sent": K * AGREEMENT + 4 * C + 1, "received": K * AGREEMENT + received}
    assert all(c.values == sent for c in counted)
    for layer in sync:
        layer.eval()
    forward(group, sync, shards)
    assert all(c.counts == total for c in counted), "evaluation sends no messages"


def test_the_gather_message_is_each_workers_mean_invstd_and_count():
    C, eps = 2, 1e-5
    group, sync, _ = replicas(3, C, protocol="gather", eps=eps)
    shards = shards_of((4, 0, 3), C, (2,))
    forward(group, sync, shards)
    (message,) = data_messages(group.log)
    assert message.op == "all_gather" and message.received.shape == (3, 2 * C + 1)
    assert message.nbytes == 8 * (2 * C + 1) and message.received_nbytes == 3 * 8 * (2 * C + 1)
    for k, x in enumerate(shards):
        assert np.array_equal(message.received[k], message.sent[k])
        assert message.sent[k][-1] == x.size // C
        if len(x):
            assert nc.rel_error(message.sent[k][:C], x.mean(axis=(0, 2))) < TOL
            assert nc.rel_error(message.sent[k][C:2 * C], 1 / np.sqrt(x.var(axis=(0, 2)) + eps)) < TOL
    assert "all_gather #2" in str(message) and "every worker gets all 3 vectors" in str(message)


def test_a_bad_protocol_is_refused_with_the_choices():
    worker = InProcessGroup(1).workers[0]
    for bad, error in (("all_gather", ValueError), ("Gather", ValueError), (None, TypeError), (1, TypeError)):
        with pytest.raises(error, match="'allreduce'.*'gather'"):
            SyncBatchNorm(3, process_group=worker, protocol=bad)


def test_the_gather_protocol_needs_a_group_with_all_gather():
    class SumsOnly:
        rank, world_size = 0, 1

        def all_reduce(self, vector, name=None):
            return vector.copy()

    SyncBatchNorm(3, process_group=SumsOnly())  # the default protocol needs all_reduce only
    with pytest.raises(TypeError, match="all_gather"):
        SyncBatchNorm(3, process_group=SumsOnly(), protocol="gather")


def test_workers_on_different_protocols_all_raise_the_same_error():
    group = InProcessGroup(2, log=[])
    sync = [SyncBatchNorm(3, process_group=group.workers[0], protocol="gather"),
            SyncBatchNorm(3, process_group=group.workers[1])]
    assert_every_worker_raises_the_same(group, sync, shards_of((2, 2), 3), "the protocol", "protocol='gather'")


def test_all_gather_returns_every_vector_in_rank_order_to_each_worker():
    group = InProcessGroup(3, log=[])
    out = group.run(lambda w, v: w.all_gather(v), [np.full(2, float(k)) for k in range(3)])
    for got in out:
        assert np.array_equal(got, [[0, 0], [1, 1], [2, 2]])
    out[0][0, 0] = 99
    assert out[1][0, 0] == 0.0 and group.log[0].sent[0][0] == 0.0
    with pytest.raises(TypeError, match="all_gather expects a float64"):
        group.workers[0].all_gather(np.ones(2, dtype=np.float32))
    with pytest.raises(ValueError, match="different lengths"):
        group.run(lambda w, v: w.all_gather(v), [np.ones(2), np.ones(3), np.ones(2)])


def test_the_autograd_groups_all_gather_differentiates_torchs_protocol():
    """The PyTorch track's differentiable group: torch's protocol written with autograd (gather
    [mean_k, var_k, n_k], merge within + between) gives BatchNorm's output and dx on the whole
    batch; all_gather's backward is the all-reduce of the stack's gradient, this worker's row."""
    torch = pytest.importorskip("torch")
    from normcore.practice.torch_track.group import AutogradGroup

    C, eps = 2, 1e-5
    shards = shards_of((4, 1, 3), C, (2,), offset=3.0, seed=12)
    dys = [np.random.default_rng(13).normal(size=x.shape) for x in shards]

    def step(worker, x, dy):
        x = torch.tensor(x, requires_grad=True)
        count = torch.tensor([float(x.numel() // C)], dtype=torch.float64)
        mean_k, var_k = x.mean(dim=(0, 2)), x.var(dim=(0, 2), unbiased=False)
        rows = AutogradGroup(worker).all_gather(torch.cat([mean_k, var_k, count]))   # (K, 2C + 1)
        means, variances, n = rows[:, :C], rows[:, C:2 * C], rows[:, 2 * C:]
        mean = (n * means).sum(dim=0) / n.sum()
        var = (n * (variances + (means - mean) ** 2)).sum(dim=0) / n.sum()        # within + between
        y = (x - mean[:, None]) / torch.sqrt(var[:, None] + eps)
        y.backward(torch.tensor(dy))
        return y.detach().numpy(), x.grad.numpy()

    out = InProcessGroup(len(shards)).run(step, shards, dys)
    x = torch.tensor(np.concatenate(shards), requires_grad=True)
    y = torch.nn.BatchNorm1d(C, eps=eps, affine=False, dtype=torch.float64)(x)
    y.backward(torch.tensor(np.concatenate(dys)))
    assert nc.rel_error(np.concatenate([o[0] for o in out]), y.detach().numpy()) < TOL
    assert nc.rel_error(np.concatenate([o[1] for o in out]), x.grad.numpy()) < TOL
