"""The experiments package and the ``normcore figures`` command: registry, loading, progress, skipping."""

import contextlib
import importlib
import pathlib
import re

import numpy as np
import pytest

from normcore import experiments
from normcore.cli import main
from normcore.perf import threads as blas

ALL = ["saturation", "covariate_shift", "loss_landscape", "batch_size", "batch_noise", "invariance",
       "pre_post_gradients", "warmup", "output_change", "effective_depth", "running_stats", "dropout", "speed",
       "layernorm_tanh", "dyt_training", "qk_norm", "peri_ln", "rmsnorm_vs_layernorm",
       "curse_of_depth", "logit_control",
       "bn_placement", "recalibration", "sync_batchnorm", "weight_decay_bn",
       "small_batches", "grad_weight", "no_norm"]


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


def test_quick_figures_go_to_their_own_folder_and_never_over_the_committed_ones(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "figures").mkdir()
    committed = tmp_path / "figures" / "invariance_table.png"
    committed.write_bytes(b"the full-mode figure")
    assert main(["figures", "invariance", "--quick"]) == 0
    assert "figures/quick/" in capsys.readouterr().err
    assert committed.read_bytes() == b"the full-mode figure"
    assert (tmp_path / "figures" / "quick" / "invariance_table.png").stat().st_size > 10_000
    assert "figures/quick/" in (ROOT / ".gitignore").read_text().split()


def test_quick_runs_are_marked_in_the_title_and_full_runs_are_not(tmp_path):
    from normcore.experiments import _plot

    for quick in (True, False):
        with _plot.figure() as (fig, ax):
            fig.suptitle("a title")
            with _plot.quick_run() if quick else contextlib.nullcontext():
                _plot.save(fig, tmp_path, "x")
        assert fig.get_suptitle().startswith(_plot.QUICK_MARK) == quick
        assert fig.get_suptitle().endswith("a title")


def test_figures_use_the_colour_blind_safe_palette_and_a_line_style_per_series():
    from normcore.experiments import (_plot, _positions, bn_placement, dropout, grad_weight, logit_control, no_norm,
                                      recalibration, running_stats, small_batches, sync_batchnorm, weight_decay_bn)

    palette = set(_plot.OKABE_ITO.values())
    families = [(_plot.COLORS, _plot.MARKERS, _plot.LINESTYLES),
                (_positions.COLORS, _positions.MARKERS, _positions.LINESTYLES),
                (dropout.COLORS, dropout.MARKERS, dropout.LINESTYLES),
                (running_stats.COLORS, running_stats.MARKERS, running_stats.LINESTYLES),
                (bn_placement.COLORS, bn_placement.MARKERS, bn_placement.LINESTYLES),
                (recalibration.COLORS, recalibration.MARKERS, recalibration.LINESTYLES),
                (recalibration.ERROR_COLORS, recalibration.ERROR_MARKERS, recalibration.ERROR_LINESTYLES),
                (sync_batchnorm.COLORS, sync_batchnorm.MARKERS, sync_batchnorm.LINESTYLES),
                (weight_decay_bn.COLORS, weight_decay_bn.MARKERS, weight_decay_bn.LINESTYLES),
                (logit_control.COLORS, logit_control.MARKERS, logit_control.LINESTYLES),
                (small_batches.COLORS, small_batches.MARKERS, small_batches.LINESTYLES),
                (grad_weight.COLORS, grad_weight.MARKERS, grad_weight.LINESTYLES),
                (no_norm.COLORS, no_norm.MARKERS, no_norm.LINESTYLES)]
    for colors, markers, linestyles in families:
        assert set(colors.values()) <= palette
        assert len(set(colors.values())) == len(colors)
        # every series differs from every other by its marker too, so colour is never needed
        assert len(set(markers.values())) == len(markers) and set(markers) == set(colors) == set(linestyles)
    sources = [p for p in (ROOT / "normcore" / "experiments").glob("*.py") if p.name != "_plot.py"]
    for path in sources:
        named = re.findall(r'(?<!\[)"(tab:[a-z]+|red|green|darkred|darkgreen)"', path.read_text())
        assert not named, f"{path.name} names the colours {named}, not the palette's"
