"""Invariance (Zhang & Sennrich 2019, Table 1): the measured table equals the paper's."""

import numpy as np
import pytest

from normcore import BatchNorm1d
from normcore.experiments import invariance

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes


@pytest.fixture(scope="module")
def result():
    return invariance.run(quick=True)


@pytest.mark.parametrize("norm", ["batchnorm", "layernorm", "rmsnorm"])
def test_measured_row_equals_the_paper(result, norm):
    assert list(result[f"{norm}/invariant"]) == invariance.PAPER[norm]


def test_invariant_and_not_invariant_are_far_apart(result):
    change = np.array([result[f"{n}/change"] for n in invariance.NORMS])
    invariant = np.array([result[f"{n}/invariant"] for n in invariance.NORMS])
    assert change[invariant].max() < 1e-10  # exact up to rounding
    assert change[~invariant].min() > 1e-2  # a visible change


def test_the_invariances_come_from_the_statistics():
    # BatchNorm in evaluation mode divides by fixed running statistics: a plain affine map,
    # invariant to none of the transformations. The measurement sees the difference.
    frozen = invariance.relative_changes(lambda d: BatchNorm1d(d, eps=1e-12).eval(), rng=3)
    assert not np.any(frozen < invariance.TOLERANCE)
    live = invariance.relative_changes(lambda d: BatchNorm1d(d, eps=1e-12), rng=3)
    assert list(live < invariance.TOLERANCE) == invariance.PAPER["batchnorm"]


def test_plot_writes_a_png(result, tmp_path):
    paths = invariance.plot(result, tmp_path)
    assert len(paths) == 1 and paths[0].stat().st_size > 10_000
