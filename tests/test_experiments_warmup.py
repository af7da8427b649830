"""Warmup: at the same Adam learning rate a 12-block Post-LN Transformer without warmup stays at
the chance loss, while Pre-LN and DeepNorm learn."""

import pytest

from normcore.experiments import warmup

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return warmup.run(quick=True, seed=0)


def _final(loss):
    return float(loss[-10:].mean())


def test_post_ln_without_warmup_does_not_learn_but_pre_ln_and_deepnorm_do(result):
    positions = list(result["positions"])
    final = {p: _final(result["loss"][i, 0, 0]) for i, p in enumerate(positions)}  # no warmup, seed 0
    chance = result["chance_loss"]
    assert final["post"] > 0.9 * chance, f"Post-LN without warmup should stay near chance: {final}"
    assert final["pre"] < 0.5 * chance, f"Pre-LN without warmup should learn: {final}"
    assert final["deepnorm"] < 0.5 * chance, f"DeepNorm without warmup should learn: {final}"


@pytest.mark.parametrize("seed", [1])  # the full run (normcore figures warmup) draws three
def test_the_failure_without_warmup_holds_for_other_seeds(seed, result):
    steps, chance = result["loss"].shape[-1], result["chance_loss"]
    post = _final(warmup.train("post", steps, 0, seed)["loss"])
    pre = _final(warmup.train("pre", steps, 0, seed)["loss"])
    assert post > 0.9 * chance and pre < 0.5 * chance, f"seed {seed}: Post-LN {post:.3f}, Pre-LN {pre:.3f}"


def test_warmup_schedule_ramps_up_to_the_same_learning_rate(result):
    lr, warm = result["lr"], int(result["warmup_steps"][1])
    assert lr[0, 0] == lr[0, -1] == result["peak_lr"]
    assert lr[1, 0] < 0.1 * result["peak_lr"] and lr[1, warm] == result["peak_lr"]


def test_plot_writes_a_png(result, tmp_path):
    paths = warmup.plot(result, tmp_path)
    assert [p.name for p in paths] == ["warmup.png"]
    assert paths[0].stat().st_size > 10_000
