"""The five norm-position experiments follow the experiments protocol."""

import pytest

from normcore import experiments

pytestmark = pytest.mark.slow  # runs the experiment's quick configuration: seconds to minutes

POSITION_EXPERIMENTS = ["pre_post_gradients", "warmup", "output_change", "effective_depth", "peri_ln"]


@pytest.mark.parametrize("name", POSITION_EXPERIMENTS)
def test_each_module_follows_the_protocol(name):
    assert name in experiments.EXPERIMENTS
    module = experiments.load(name)
    assert module.NAME == name
    assert isinstance(module.TITLE, str) and module.TITLE
    assert isinstance(module.TAKEAWAY, str) and module.TAKEAWAY and "\n" not in module.TAKEAWAY
    assert callable(module.run) and callable(module.plot)


def test_progress_is_reported_up_to_the_total(tmp_path):
    calls = []
    experiments.run_and_plot("effective_depth", quick=True, outdir=tmp_path,
                             progress=lambda done, total, label: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1]
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
