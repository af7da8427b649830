"""DyT trains like LayerNorm at the same learning rate, if alpha_init is small enough for the
depth: a too large alpha_init leaves the model near the chance loss, sooner in a deeper model."""

import numpy as np
import pytest

from normcore.experiments import dyt_training
from normcore.norms import DyT

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return dyt_training.run(quick=True, seed=0)


def _final(result):
    return dict(zip(result["norms"], result["final"][:, 0]))  # seed 0


def test_all_three_norms_learn_well_below_chance(result):
    final = _final(result)
    assert all(v < 0.25 * result["chance_loss"] for v in final.values()), final


def test_dyt_ends_behind_layernorm_but_within_a_factor_and_rmsnorm_close_to_it(result):
    final = _final(result)
    assert 1.5 * final["layernorm"] < final["dyt"] < 15 * final["layernorm"], final
    assert final["rmsnorm"] < 2 * final["layernorm"], final


def test_too_large_an_alpha_init_keeps_the_deeper_model_at_chance(result):
    deep = result["dyt_final"][-1, :, 0]  # (alphas,), seed 0
    chance = result["chance_loss"]
    assert deep[-1] > 0.9 * chance, f"largest alpha_init {result['alphas'][-1]}: {deep}"
    assert deep[0] < 0.5 * chance, f"smallest alpha_init {result['alphas'][0]}: {deep}"
    assert np.all(np.diff(deep) > 0), f"the final loss should grow with alpha_init: {deep}"


def test_the_same_alpha_init_trains_worse_in_the_deeper_model(result):
    one = list(result["alphas"]).index(1.0)
    shallow, deep = result["dyt_final"][:, one, 0]
    assert deep > 1.5 * shallow, f"alpha_init 1: {result['depths']} blocks give {shallow:.3f}, {deep:.3f}"


@pytest.mark.parametrize("seed", [1])
def test_the_deep_failure_at_large_alpha_init_holds_for_other_seeds(seed, result):
    steps, deep, chance = result["steps"], int(result["depths"][-1]), result["chance_loss"]
    large = float(dyt_training.final_loss(dyt_training.train("dyt", deep, seed, steps, 4.0)))
    small = float(dyt_training.final_loss(dyt_training.train("dyt", deep, seed, steps, 0.1)))
    assert large > 0.9 * chance and small < 0.6 * chance, f"seed {seed}: alpha_init 4 {large:.3f}, 0.1 {small:.3f}"


def test_set_alpha_init_sets_every_dyt_and_only_dyt():
    model = dyt_training.build("dyt", 2, seed=0, alpha_init=0.07)
    dyts = [m for _, m in model.named_modules() if isinstance(m, DyT)]
    assert len(dyts) == 2 * 2 + 1  # two per block and the final norm
    assert all(np.all(m.alpha.data == np.float32(0.07)) for m in dyts)
    layernorm = dyt_training.build("layernorm", 2, seed=0, alpha_init=0.07)
    reference = dyt_training.build("layernorm", 2, seed=0)
    for (name, p), (_, q) in zip(layernorm.named_parameters(), reference.named_parameters()):
        assert np.array_equal(p.data, q.data), name


def test_largest_training_alpha_reads_the_sweep():
    alphas = np.array([0.1, 1.0, 4.0])
    final = np.array([[[0.1], [0.2], [2.7]], [[0.1], [2.7], [2.7]], [[2.7], [2.7], [2.7]]])
    assert np.allclose(dyt_training.largest_training_alpha(final, alphas, 2.77), [1.0, 0.1, np.nan], equal_nan=True)


def test_plot_writes_two_pngs(result, tmp_path):
    paths = dyt_training.plot(result, tmp_path)
    assert [p.name for p in paths] == ["dyt_training.png", "dyt_training_alpha.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
