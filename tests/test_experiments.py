"""The experiments package and the ``normcore figures`` command: registry, loading, progress, skipping."""

import importlib
import pathlib
import re

import numpy as np
import pytest

from normcore import experiments
from normcore.cli import main
from normcore.perf import threads as blas

ALL = ["saturation", "covariate_shift", "loss_landscape", "batch_size", "batch_noise", "invariance",
       "pre_post_gradients", "warmup", "output_change", "effective_depth", "running_stats", "dropout", "speed"]


def test_registry_lists_all_in_order():
    assert experiments.EXPERIMENTS == ALL


@pytest.mark.parametrize("name", ALL)
def test_each_module_follows_the_protocol(name):
    module = experiments.load(name)
    assert module.NAME == name
    assert isinstance(module.TITLE, str) and module.TITLE
    assert isinstance(module.TAKEAWAY, str) and "\n" not in module.TAKEAWAY
    assert callable(module.run) and callable(module.plot)


@pytest.fixture
def warmup_missing(monkeypatch):
    """Pretend normcore/experiments/warmup.py is not there."""
    real_import = importlib.import_module

    def import_module(name, *args):
        if name == "normcore.experiments.warmup":
            err = ModuleNotFoundError(f"No module named {name!r}")
            err.name = name
            raise err
        return real_import(name, *args)

    monkeypatch.setattr(importlib, "import_module", import_module)


def test_unknown_and_missing_experiments_raise_a_clear_error(warmup_missing):
    with pytest.raises(experiments.ExperimentNotFound, match="unknown experiment 'nope'"):
        experiments.load("nope")
    with pytest.raises(experiments.ExperimentNotFound, match="warmup.py is missing"):
        experiments.load("warmup")


def test_figures_command_skips_a_missing_module_and_writes_the_others(tmp_path, warmup_missing, capsys):
    status = main(["figures", "warmup", "invariance", "--quick", "--outdir", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 0
    assert "skipped" in err and "warmup" in err
    assert (tmp_path / "invariance_table.png").stat().st_size > 10_000
    assert "100%" in err  # the progress display reached the end


def test_figures_command_rejects_an_unknown_name(tmp_path, capsys):
    assert main(["figures", "nonsense", "--outdir", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_single_thread_restores_the_blas_thread_count():
    apis = blas.openblas()
    if not apis:
        pytest.skip("NumPy is not linked against OpenBLAS here")
    set_threads, get_threads = apis[0]
    before = get_threads()
    with blas.single_thread():
        assert get_threads() == 1
        np.ones((50, 50)) @ np.ones((50, 50))
    assert get_threads() == before


ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_shows_committed_figures_with_each_takeaway():
    readme = (ROOT / "README.md").read_text()
    linked = re.findall(r"\((figures/[\w.-]+\.png)\)", readme)
    assert linked and all((ROOT / path).is_file() for path in linked)
    for name in ALL:
        module = experiments.load(name)
        assert module.TAKEAWAY in readme, f"README lacks the takeaway of {name}"
