"""The curse of depth: in Pre-LN the residual stream grows with depth and the deep blocks'
Jacobians come nearer the identity, while Post-LN's stream stays at the norm's scale and its
blocks stay as far from the identity deep as shallow; LayerNorm Scaling, at initialisation, brings
the deep blocks nearer the identity still."""

import numpy as np
import pytest

from normcore.experiments import curse_of_depth
from normcore.experiments._positions import tiny_model
from normcore.module import Sequential
from normcore.nn import CrossEntropyLoss

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes

AT_INIT, AFTER = 0, 1


@pytest.fixture(scope="module")
def result():
    return curse_of_depth.run(quick=True, seed=0)


def _of(result, key, placement, depth, when=AT_INIT):
    """``result[key_depth]`` of ``placement``, seed 0, at initialisation or after training."""
    return result[f"{key}_{depth}"][list(result["placements"]).index(placement), 0, when]


def test_the_jacobian_estimate_matches_the_exact_distance_from_the_identity():
    task = curse_of_depth.copy_task()
    block = tiny_model(task, "pre", 2, seed=0).blocks[1]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 3, 32))
    block(x)
    rows = []  # row i: e_i^T J, from the backward of the unit vector e_i
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = 1.0
        block(x)
        rows.append(block.backward(e.reshape(x.shape)).ravel())
    exact = np.linalg.norm(np.array(rows) - np.eye(x.size)) / np.sqrt(x.size)
    estimate = curse_of_depth.jacobian_distance(block, x, rng, n_directions=300)
    assert exact > 0.1 and abs(estimate - exact) < 0.1 * exact, (estimate, exact)


@pytest.mark.parametrize("placement", ["post", "lns"])
def test_the_loss_after_the_blocks_and_without_a_block_are_the_model_s_own(placement):
    task = curse_of_depth.copy_task()
    model = tiny_model(task, placement, 3, seed=1)
    tokens, targets = task.batch(4, 0)
    loss = float(CrossEntropyLoss()(model(tokens).reshape(-1, task.vocab_size), targets.reshape(-1)))
    x = model.pos_emb(model.tok_emb(tokens))
    for block in model.blocks:
        x = block(x)
    assert curse_of_depth.head_loss(model, x, targets) == pytest.approx(loss, rel=1e-12)
    model.blocks = Sequential(*[b for i, b in enumerate(model.blocks) if i != 1])  # without block 2, by hand
    without = float(CrossEntropyLoss()(model(tokens).reshape(-1, task.vocab_size), targets.reshape(-1)))
    model = tiny_model(task, placement, 3, seed=1)
    assert curse_of_depth.loss_without(model, tokens, targets, 1) == pytest.approx(without, rel=1e-12)


def test_pre_ln_stream_grows_with_depth_and_post_ln_stays_at_the_norms_scale(result):
    depth = max(result["depths"])
    pre, post = _of(result, "rms", "pre", depth), _of(result, "rms", "post", depth)
    assert np.all(np.diff(pre) > 0) and pre[-1] > 1.5 * pre[0], pre
    assert np.allclose(post[1:], 1.0, atol=0.02), post


def test_pre_ln_deep_blocks_come_nearer_the_identity_and_post_ln_blocks_do_not(result):
    depth = max(result["depths"])
    pre, post = _of(result, "jacobian", "pre", depth), _of(result, "jacobian", "post", depth)
    assert pre[-1] < 0.7 * pre[0] and np.all(pre[1:] < pre[0]), pre
    assert post.min() > 0.7 * post.max() and post[-1] > 1.5 * pre[-1], (post, pre)


def test_at_initialisation_layernorm_scaling_brings_deep_blocks_nearer_the_identity_than_pre_ln(result):
    depth = max(result["depths"])
    lns, pre = _of(result, "jacobian", "lns", depth), _of(result, "jacobian", "pre", depth)
    assert lns[0] == pytest.approx(pre[0], rel=1e-6), "block 1 is scaled by 1/sqrt(1): the same block"
    assert np.all(lns[1:] < 0.75 * pre[1:]), (lns, pre)
    assert np.all(_of(result, "move", "lns", depth)[1:] < _of(result, "move", "pre", depth)[1:])


def test_mix_ln_starts_as_post_ln_and_continues_as_pre_ln(result):
    depth = max(result["depths"])  # 6 blocks: the first one Post-LN
    mix, post = _of(result, "rms", "mix", depth), _of(result, "rms", "post", depth)
    assert mix[1] == pytest.approx(post[1], rel=1e-6) and np.all(np.diff(mix[1:]) > 0), mix


def test_plot_writes_one_png(result, tmp_path):
    paths = curse_of_depth.plot(result, tmp_path)
    assert [p.name for p in paths] == ["curse_of_depth.png"] and paths[0].stat().st_size > 10_000
