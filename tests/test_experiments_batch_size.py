"""Batch size (Wu & He 2018): BatchNorm degrades at small batches, GroupNorm and LayerNorm do not."""

import numpy as np
import pytest

from normcore.experiments import batch_size

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return batch_size.run(quick=True)


def col(result, b):
    return list(result["batch_sizes"]).index(b)


def test_batchnorm_error_climbs_at_batch_size_2(result):
    bn = result["batchnorm/error"]
    assert bn[col(result, 2)] > bn[col(result, 32)] + 0.2
    for other in ("groupnorm", "layernorm"):
        assert bn[col(result, 2)] > result[f"{other}/error"][col(result, 2)] + 0.2


def test_at_the_largest_batch_the_three_norms_are_level(result):
    errors = [result[f"{norm}/error"][col(result, 32)] for norm in ("batchnorm", "groupnorm", "layernorm")]
    assert max(errors) - min(errors) < 0.03, f"errors at a batch of 32: {errors}"


@pytest.mark.parametrize("norm", ["groupnorm", "layernorm"])
def test_per_sample_norms_do_not_degrade_at_small_batches(result, norm):
    err = result[f"{norm}/error"]
    assert err[col(result, 2)] < err[col(result, 32)] + 0.05
    # The same answer in train and eval mode, up to rounding: the evaluation pass multiplies the whole
    # test set at once and the training pass one batch at a time, and a BLAS may block the two
    # products differently (on some processors they differ in the last bit).
    assert np.all(np.asarray(result[f"{norm}/mode_gap"]) < 1e-12), result[f"{norm}/mode_gap"]


def test_batchnorm_train_eval_gap_grows_as_the_batch_shrinks(result):
    gap = result["batchnorm/mode_gap"]  # batch sizes in decreasing order
    assert np.all(np.diff(gap) > 0)
    assert gap[col(result, 2)] > 2 * gap[col(result, 32)]


def test_plot_writes_a_png(result, tmp_path):
    paths = batch_size.plot(result, tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
