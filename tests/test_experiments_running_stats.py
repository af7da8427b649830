"""BatchNorm running statistics under momentum 0.1, 0.9 and None; biased vs unbiased variance."""

import numpy as np
import pytest

from normcore.experiments import running_stats

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return running_stats.run(quick=True)


def test_momentum_none_is_the_exact_cumulative_average(result):
    assert result["None/max_dev_from_cumulative_mean"] < 1e-12
    assert result["0.1/max_dev_from_cumulative_mean"] > 0.1


def test_all_settle_at_the_true_mean(result):
    for k in running_stats.MOMENTA:
        assert result[f"{k}/late_mean_of_mean"] == pytest.approx(result["mu"], abs=0.05)


def test_the_running_variance_is_unbiased(result):
    s2, n = result["sigma2"], result["n"]
    biased = s2 * (n - 1) / n
    # the batch variance BatchNorm normalises with is biased ...
    assert result["biased_batch_var_mean"] == pytest.approx(biased, rel=0.03)
    # ... the running variance averages the unbiased one and settles at sigma^2
    for k in running_stats.MOMENTA:
        assert abs(result[f"{k}/late_mean_of_var"] - s2) < 0.3 * (s2 - biased)


def test_momentum_01_forgets_its_start_in_about_30_batches(result):
    # (1 - 0.1)^t < 5% for t >= 29; noise moves it by a few batches at most
    assert 20 <= result["0.1/steps_to_5pct"] <= 40
    assert result["0.9/steps_to_5pct"] <= 3


def test_flipped_momentum_is_about_as_noisy_as_one_batch(result):
    one_batch = running_stats.SIGMA / np.sqrt(result["n"])
    noise = {k: result[f"{k}/late_noise_of_mean"] for k in running_stats.MOMENTA}
    # stationary noise of an exponential average: sqrt(m / (2 - m)) * one_batch
    for k, m in (("0.1", 0.1), ("0.9", 0.9)):
        assert noise[k] == pytest.approx(np.sqrt(m / (2 - m)) * one_batch, rel=0.2)
    assert noise["0.9"] > 3 * noise["0.1"] > 3 * noise["None"]


def test_plot_writes_pngs(result, tmp_path):
    paths = running_stats.plot(result, tmp_path)
    assert len(paths) == 2 and all(p.stat().st_size > 10_000 for p in paths)
