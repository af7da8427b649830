"""weight_decay_bn: a weight before BatchNorm is scale-invariant; without decay SGD grows its norm
(by exactly lr^2 ||g||^2 a step), with decay the norm settles where the effective learning rate
is many times higher; decaying gamma shrinks it; Adam grows the norm faster."""

import numpy as np
import pytest

from normcore.experiments import _nn, weight_decay_bn as wdbn

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return wdbn.run(quick=True, seed=0)


def series(result, run, key):
    return result[key][list(result["runs"]).index(run), 0]  # seed 0


def test_loss_is_unchanged_and_gradient_divided_by_c_when_the_weight_before_batchnorm_is_scaled(result):
    change, ratio = result["scale_loss_change"], result["scale_grad_ratio"]  # rows: W1, head weight
    # W1: only BatchNorm's eps (inside the square root) separates L(cW) from L(W)
    assert change[0].max() < 2e-5 and np.abs(ratio[0] - 1).max() < 5e-4, (change[0], ratio[0])
    # the head's weight, which no norm follows, is not scale-invariant: the same check fails there
    assert change[1].min() > 1e-2 and np.abs(ratio[1] - 1).min() > 0.3, (change[1], ratio[1])


def test_without_decay_sgd_grows_the_norm_every_step_by_lr2_grad2(result):
    w2 = series(result, "sgd", "weight_norm") ** 2  # (steps + 1, layers)
    growth = np.diff(w2, axis=0)
    predicted = (wdbn.LR * series(result, "sgd", "grad_norm")) ** 2  # gradient orthogonal to W
    assert np.all(growth > 0), "the norm of a scale-invariant weight must grow at every plain SGD step"
    rel = np.abs(growth - predicted) / predicted
    assert np.median(rel) < 1e-3 and np.quantile(rel, 0.95) < 1e-2, (np.median(rel), rel.max())
    for run in ("sgd", "sgd_wd"):
        assert np.abs(series(result, run, "cosine")).max() < 1e-3, run  # W . grad = 0, up to eps


def test_with_decay_the_norm_settles_and_the_effective_lr_rises(result):
    norm, eff = series(result, "sgd_wd", "weight_norm")[:, 0], series(result, "sgd_wd", "effective_lr")[:, 0]
    steps = len(norm) - 1
    last = norm[3 * steps // 4:]
    assert norm[-1] < 0.4 * norm[0], "decay must pull the norm far below its initial value"
    assert (last.max() - last.min()) / last.mean() < 0.05, "the norm must level off by the last quarter"
    assert norm[steps // 4] < 0.75 * norm[0], "while it falls fast in the first quarter"
    assert eff[-1] > 5 * eff[0], (eff[0], eff[-1])
    no_decay = series(result, "sgd", "effective_lr")[:, 0]
    assert no_decay[-1] <= no_decay[0] and eff[-1] > 5 * no_decay[-1]


def test_at_equilibrium_decay_balances_the_gradients_growth(result):
    """Over the last quarter, the decay's shrink (1 - (1 - lr wd)^2) ||W||^2 equals the growth
    lr^2 ||g||^2 on average: the equilibrium norm is where the two meet."""
    i = list(result["runs"]).index("sgd_wd")
    lr, wd = result["lr"][i], result["weight_decay"][i]
    norm, grad = result["weight_norm"][i, 0, :-1, 0], result["grad_norm"][i, 0, :, 0]
    q = 3 * len(grad) // 4
    balance = np.mean((lr * grad[q:]) ** 2) / ((1 - (1 - lr * wd) ** 2) * np.mean(norm[q:] ** 2))
    assert 0.85 < balance < 1.15, balance
    relative_step = result["update_norm"][i, 0, q:, 0] / norm[q:]  # then lr ||g|| / ||W|| -> sqrt(2 lr wd)
    assert abs(relative_step.mean() / np.sqrt(2 * lr * wd) - 1) < 0.05, relative_step.mean()
    early = np.mean((lr * grad[:50]) ** 2) / ((1 - (1 - lr * wd) ** 2) * np.mean(norm[:50] ** 2))
    assert early < 0.3, f"at the start the decay dominates, far from the balance: {early}"


def test_decaying_gamma_shrinks_it_and_excluding_it_keeps_it(result):
    assert series(result, "sgd_wd_all", "gamma")[-1, 0] < 0.3
    assert series(result, "sgd_wd", "gamma")[-1, 0] > 0.9


def test_adam_grows_the_norm_fast_and_its_relative_step_falls_adamw_holds_it(result):
    adam, adamw = series(result, "adam", "weight_norm")[:, 0], series(result, "adamw", "weight_norm")[:, 0]
    assert adam[-1] > 1.3 * adam[0] and adamw[-1] < 0.7 * adamw[0], (adam[[0, -1]], adamw[[0, -1]])

    def relative_step(run):
        return series(result, run, "update_norm")[:, 0] / series(result, run, "weight_norm")[:-1, 0]

    q = 3 * len(adam) // 4
    assert relative_step("adam")[q:].mean() < 0.3 * relative_step("adam")[:10].mean()
    assert relative_step("adamw")[q:].mean() > 2 * relative_step("adam")[q:].mean()


@pytest.mark.parametrize("seed", [1, 2])
def test_other_seeds_grow_without_decay_and_settle_with_it(seed):
    data = (_nn.teacher_task(wdbn.N_TRAIN, 20, 10, rng=seed + 100), _nn.teacher_task(256, 20, 10, rng=seed + 200))
    plain, decayed = (wdbn.train(run, 300, seed, data)["weight_norm"] for run in ("sgd", "sgd_wd"))
    assert np.all(np.diff(plain, axis=0) > 0)
    assert np.all(decayed[-1] < 0.5 * decayed[0]), decayed[[0, -1]]


def test_plot_writes_the_pngs(result, tmp_path):
    paths = wdbn.plot(result, tmp_path)
    assert [p.name for p in paths] == ["weight_decay_bn.png", "weight_decay_bn_scale.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
