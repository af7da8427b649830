"""BatchRenorm1d/2d and GhostBatchNorm1d/2d: gradient checks, the bridge's torch twins (forward,
every gradient and the running statistics to 1e-10 in float64), running statistics, warm-up,
state dicts, arguments and input layouts."""

import numpy as np
import pytest

import normcore as nc
from normcore._install import TORCH_CPU
from normcore.layer_cases import randomize_parameters
from norm_tiers import with_layout


def need_torch():
    return pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")


def with_running_stats(layer, rng, spread=1.0):
    """Random gamma, beta and running statistics (never the initial 0 and 1)."""
    randomize_parameters(layer, rng)
    layer.running_mean[...] = rng.standard_normal(layer.num_features) * spread
    layer.running_var[...] = rng.uniform(0.5, 2.0, layer.num_features) * spread ** 2
    return layer


# --- BatchRenorm -----------------------------------------------------------------------------

def matches_torch(layer, x):
    """The bridge's compare against the layer's torch twin at 1e-10; the names of its rows."""
    need_torch()
    from normcore.torch_bridge import compare
    report = compare(layer, x, atol=1e-10, rtol=1e-10, out=None)
    assert report.passed, str(report)
    return {row.name for row in report.rows}


def clipped(layer, x):
    """Whether the layer's training output differs from the same layer's with r and d free."""
    free = type(layer)(layer.num_features, r_max=1e9, d_max=1e9, momentum=layer.momentum)
    free.load_state_dict(layer.state_dict())
    before = layer.state_dict()
    y = layer(x)
    layer.load_state_dict(before)
    return not np.allclose(y, free(x), rtol=1e-9)


@pytest.mark.parametrize("cls, shape", [(nc.BatchRenorm1d, (6, 3)), (nc.BatchRenorm1d, (4, 3, 5)),
                                        (nc.BatchRenorm2d, (3, 3, 2, 2))])
@pytest.mark.parametrize("r_max, d_max, clip", [(1e3, 1e3, False), (1.2, 0.1, True)])
def test_batch_renorm_matches_torch_twin(cls, shape, r_max, d_max, clip):
    """The twin (torch's BatchNorm with Batch Renorm's training forward: r and d detached, the
    running statistics updated with the raw batch statistics), with r and d free (where the
    stop-gradient changes the gradient) and clipped; then in evaluation."""
    rng = np.random.default_rng(0)
    ours = with_running_stats(cls(3, r_max=r_max, d_max=d_max, momentum=0.3), rng, spread=2.0)
    x = rng.standard_normal(shape) * 1.5 + 0.5
    assert clipped(ours, x) == clip
    assert {"running_mean", "running_var", "num_batches_tracked"} <= matches_torch(ours, x)
    matches_torch(ours.eval(), x)


def test_batch_renorm_gradcheck_where_r_and_d_are_clipped():
    """Where r and d sit at their bounds they are constant in x too, and the numerical gradient
    agrees with the stop-gradient one; unclipped, it would not (they depend on x)."""
    rng = np.random.default_rng(1)
    layer = with_running_stats(nc.BatchRenorm1d(3, r_max=1.5, d_max=0.5), rng)
    layer.running_mean[...], layer.running_var[...] = [30.0, -30.0, 30.0], 100.0  # r = 1 / 1.5, |d| = 0.5
    x = rng.standard_normal((6, 3, 2))
    report = nc.gradcheck(layer, x, dy=rng.standard_normal((6, 3, 2)))
    assert report.passed, report
    unclipped = with_running_stats(nc.BatchRenorm1d(3, r_max=100.0, d_max=100.0), np.random.default_rng(1))
    assert not nc.gradcheck(unclipped, x, dy=rng.standard_normal((6, 3, 2))).passed


def test_batch_renorm_unclipped_output_is_the_evaluation_output():
    """Unclipped, x_hat * r + d = (x - running_mean) / sigma: training gives what evaluation will."""
    rng = np.random.default_rng(2)
    layer = with_running_stats(nc.BatchRenorm1d(4, r_max=1e6, d_max=1e6), rng)
    x = rng.standard_normal((5, 4))
    expected = layer.eval()(x)
    np.testing.assert_allclose(layer.train()(x), expected, rtol=1e-12)


def test_batch_renorm_running_stats_are_the_raw_batch_statistics():
    """The running statistics are BatchNorm's, whatever r and d were."""
    rng = np.random.default_rng(3)
    ours = with_running_stats(nc.BatchRenorm2d(2, r_max=1.1, d_max=0.1), rng, spread=5.0)
    bn = nc.BatchNorm2d(2).load_state_dict(ours.state_dict())
    x = rng.standard_normal((3, 2, 2, 2))
    ours(x)
    bn(x)
    for key, value in bn.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[key], value, rtol=1e-14)


def test_batch_renorm_warmup_is_batchnorm_then_relaxes_linearly():
    rng = np.random.default_rng(4)
    layer = with_running_stats(nc.BatchRenorm1d(3, r_max=3.0, d_max=5.0, warmup=(2, 6, 4)), rng, spread=5.0)
    bn = nc.BatchNorm1d(3).load_state_dict(layer.state_dict())
    limits = []
    for _ in range(2):  # the hold: plain BatchNorm
        x = rng.standard_normal((4, 3))
        limits.append(layer.limits())
        np.testing.assert_allclose(layer(x), bn(x), rtol=1e-12)
    for _ in range(6):
        limits.append(layer.limits())
        layer(rng.standard_normal((4, 3)))
    assert limits == [(1.0, 0.0), (1.0, 0.0), (1.0, 0.0), (1.5, 2.5), (2.0, 5.0), (2.5, 5.0), (3.0, 5.0),
                      (3.0, 5.0)]


def test_batch_renorm_eval_and_bad_arguments_and_failed_calls():
    rng = np.random.default_rng(5)
    layer = with_running_stats(nc.BatchRenorm1d(3), rng)
    bn = nc.BatchNorm1d(3).load_state_dict(layer.state_dict()).eval()
    x, dy = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    layer.eval()
    np.testing.assert_allclose(layer(x), bn(x), rtol=1e-14)
    np.testing.assert_allclose(layer.backward(dy), bn.backward(dy), rtol=1e-14)
    layer.train()
    before = layer.state_dict()
    with pytest.raises(ValueError, match="more than 1 value"):
        layer(np.ones((1, 3)))
    with pytest.raises(ValueError, match="channels"):
        layer(np.ones((4, 5)))
    assert all(np.array_equal(before[k], v) for k, v in layer.state_dict().items())
    for kwargs, err in [({"r_max": 0.5}, ValueError), ({"d_max": -1.0}, ValueError), ({"r_max": "3"}, TypeError),
                        ({"warmup": (5, 2, 8)}, ValueError), ({"warmup": 5}, TypeError),
                        ({"warmup": (1.5, 2, 3)}, TypeError)]:
        with pytest.raises(err):
            nc.BatchRenorm1d(3, **kwargs)


# --- GhostBatchNorm --------------------------------------------------------------------------

@pytest.mark.parametrize("cls, shape, vbs, kwargs", [
    (nc.GhostBatchNorm1d, (8, 3), 3, {"momentum": 0.2}),
    (nc.GhostBatchNorm1d, (7, 3, 2), 2, {"momentum": None}),
    (nc.GhostBatchNorm2d, (5, 3, 2, 2), 2, {"bias": False}),
    (nc.GhostBatchNorm2d, (4, 3, 2, 2), 8, {"affine": False}),
    (nc.GhostBatchNorm1d, (0, 3, 2), 2, {}),  # an empty batch: one empty chunk, counted once
])
def test_ghost_batchnorm_matches_torch_batchnorm_chunk_by_chunk(cls, shape, vbs, kwargs):
    """The twin is torch's own BatchNorm applied to each chunk (``x.split``), in order."""
    rng = np.random.default_rng(6)
    ours = with_running_stats(cls(3, virtual_batch_size=vbs, **kwargs), rng)
    assert "num_batches_tracked" in matches_torch(ours, rng.standard_normal(shape) * 2 + 1)
    assert int(ours.num_batches_tracked) == max(1, -(-shape[0] // vbs))  # one update per chunk, on both sides
    matches_torch(ours.eval(), rng.standard_normal(shape))


@pytest.mark.parametrize("vbs", [2, 3, 10])
def test_ghost_batchnorm_gradcheck(vbs):
    rng = np.random.default_rng(7)
    layer = with_running_stats(nc.GhostBatchNorm1d(3, virtual_batch_size=vbs), rng)
    report = nc.gradcheck(layer, rng.standard_normal((7, 3, 2)), dy=rng.standard_normal((7, 3, 2)))
    assert report.passed, report


def test_ghost_batchnorm_as_large_as_the_batch_is_batchnorm_and_eval_is_batchnorms():
    rng = np.random.default_rng(8)
    ghost = with_running_stats(nc.GhostBatchNorm2d(2, virtual_batch_size=8), rng)
    bn = nc.BatchNorm2d(2).load_state_dict(ghost.state_dict())
    x, dy = rng.standard_normal((5, 2, 2, 3)), rng.standard_normal((5, 2, 2, 3))
    np.testing.assert_allclose(ghost(x), bn(x), rtol=1e-13)
    np.testing.assert_allclose(ghost.backward(dy), bn.backward(dy), rtol=1e-12, atol=1e-14)
    ghost.eval(), bn.eval()
    np.testing.assert_allclose(ghost(x), bn(x), rtol=1e-14)
    np.testing.assert_allclose(ghost.backward(dy), bn.backward(dy), rtol=1e-14)


def test_ghost_batchnorm_a_bad_last_chunk_changes_nothing():
    rng = np.random.default_rng(9)
    layer = with_running_stats(nc.GhostBatchNorm1d(3, virtual_batch_size=2), rng)
    before = layer.state_dict()
    with pytest.raises(ValueError, match="more than 1 value"):
        layer(rng.standard_normal((5, 3)))  # the last chunk holds one sample
    assert all(np.array_equal(before[k], v) for k, v in layer.state_dict().items())
    for bad, err in [(0, ValueError), (2.5, TypeError), ("8", TypeError)]:
        with pytest.raises(err, match="virtual_batch_size"):
            nc.GhostBatchNorm1d(3, virtual_batch_size=bad)


@pytest.mark.parametrize("layout", ["F", "transposed", "sliced"])
@pytest.mark.parametrize("make", [lambda: nc.BatchRenorm1d(3, r_max=1.5, d_max=0.5),
                                  lambda: nc.GhostBatchNorm1d(3, virtual_batch_size=2)])
def test_layouts_give_the_same_numbers(layout, make):
    rng = np.random.default_rng(10)
    x, dy = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    a, b = (with_running_stats(make(), np.random.default_rng(1)) for _ in range(2))
    np.testing.assert_allclose(a(x), b(with_layout(x, layout)), rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(a.backward(dy), b.backward(with_layout(dy, layout)), rtol=1e-13, atol=1e-14)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p.grad, q.grad, rtol=1e-13)
    for key, value in a.state_dict().items():
        np.testing.assert_allclose(b.state_dict()[key], value, rtol=1e-14)


def test_ghost_batchnorm_normalises_as_the_batch_noise_experiments_device():
    """Same output and gradients in training; the running statistics differ by design (one update
    per group here, one per batch with the groups' averages there)."""
    from normcore.experiments.batch_noise import GhostBatchNorm
    rng = np.random.default_rng(11)
    ours, device = nc.GhostBatchNorm1d(3, virtual_batch_size=4), GhostBatchNorm(3, ghost=4)
    randomize_parameters(ours, rng)
    device.norm.load_state_dict({"weight": ours.gamma.data, "bias": ours.beta.data,
                                 "running_mean": ours.running_mean, "running_var": ours.running_var,
                                 "num_batches_tracked": ours.num_batches_tracked})
    x, dy = rng.standard_normal((8, 3)), rng.standard_normal((8, 3))
    np.testing.assert_allclose(ours(x), device(x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ours.backward(dy), device.backward(dy), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ours.gamma.grad, device.norm.weight.grad, rtol=1e-13)
    assert int(ours.num_batches_tracked) == 2 and not np.allclose(ours.running_var, device.norm.running_var)
