"""Peri-LN: at initialisation Pre-LN's and Peri-LN's residual streams grow with depth and Post-LN's
and DeepNorm's stay at the norm's scale; at a high learning rate Pre-LN's stream blows up by
orders of magnitude while Peri-LN's stays within tens."""

import numpy as np
import pytest

from normcore.experiments import peri_ln
from normcore.experiments._positions import tiny_model

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return peri_ln.run(quick=True, seed=0)


def _of(result, key, position):
    return result[key][list(result["positions"]).index(position)]


def test_at_init_pre_ln_grows_with_depth_and_post_ln_and_deepnorm_stay_at_the_norms_scale(result):
    pre = _of(result, "rms", "pre")[0, 0]  # seed 0, at initialisation: (L + 1,)
    assert np.all(np.diff(pre) > 0) and pre[-1] / pre[0] > 1.5, pre
    for position in ("post", "deepnorm"):
        stream = _of(result, "rms", position)[0, 0]
        assert np.allclose(stream[1:], 1.0, atol=0.02), (position, stream)


def test_at_init_peri_ln_grows_like_sqrt_of_the_number_of_unit_branches(result):
    """Each block adds two branches normalised to RMS 1 (gamma_out = 1): x_l**2 ~ x_0**2 + 2 l."""
    peri, pre = _of(result, "rms", "peri")[0, 0], _of(result, "rms", "pre")[0, 0]
    layers = np.arange(len(peri))
    expected = np.sqrt(peri[0] ** 2 + 2 * layers)
    assert np.allclose(peri, expected, rtol=0.2), (peri, expected)
    assert peri[-1] > 1.3 * pre[-1], "at initialisation Peri-LN's stream is the larger of the two here"


@pytest.mark.parametrize("seed", [1, 2])
def test_the_profiles_at_init_hold_for_other_seeds(seed):
    task = peri_ln.copy_task()
    tokens, _ = task.batch(peri_ln.PROBE_BATCH, peri_ln.PROBE_SEED)
    growth = {p: peri_ln.residual_rms(tiny_model(task, p, peri_ln.N_LAYERS, seed, dtype=np.float32), tokens)
              for p in peri_ln.POSITIONS}
    assert growth["pre"][-1] / growth["pre"][0] > 1.5
    assert growth["peri"][-1] > 1.3 * growth["pre"][-1]
    assert np.allclose(growth["post"][1:], 1.0, atol=0.02)


def test_at_the_high_lr_pre_ln_stream_blows_up_and_peri_ln_stays_in_scale(result):
    high = 1 + int(np.argmax(result["lrs"]))
    pre, peri = _of(result, "growth", "pre")[0, high], _of(result, "growth", "peri")[0, high]
    assert pre > 100 and peri < 50 and pre > 10 * peri, (pre, peri)


def test_at_the_standard_lr_neither_stream_blows_up(result):
    low = 1 + int(np.argmin(result["lrs"]))
    for position in ("pre", "peri"):
        assert _of(result, "growth", position)[0, low] < 10, position


def test_at_the_high_lr_post_ln_and_deepnorm_gradients_vanish_below_the_last_block(result):
    high = 1 + int(np.argmax(result["lrs"]))
    for position in ("post", "deepnorm"):
        grad = _of(result, "grad", position)[0]  # (1 + lrs, L)
        assert grad[high, 0] < 1e-3 * grad[0, 0], (position, grad[:, 0])


def test_at_the_standard_lr_pre_peri_and_deepnorm_start_to_learn(result):
    low, chance = int(np.argmin(result["lrs"])), result["chance_loss"]
    for position in ("pre", "peri", "deepnorm"):
        assert _of(result, "final_loss", position)[low, 0] < chance - 0.15, position


def test_plot_writes_two_pngs(result, tmp_path):
    paths = peri_ln.plot(result, tmp_path)
    assert [p.name for p in paths] == ["peri_ln.png", "peri_ln_curves.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
