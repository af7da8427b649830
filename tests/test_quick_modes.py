"""Quick when it says quick: what ``--quick`` runs is what its help text says, anything long shows
progress, ``explain`` refuses a shape too large to print before doing any work, and the README
gives a newcomer a quick test command beside the full one CI runs. No test here times anything:
the settings are checked, not how long they take."""

import ast
import configparser
import contextlib
import io
import pathlib
import re

import numpy as np
import pytest

from normcore import cli, experiments
from normcore.commands import explain
from normcore.perf import bench

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = dict(shapes=((16, 64),), dtypes=("float32",), repeats=2, step_repeats=1, warmup=1,
            transformer=dict(vocab_size=11, d_model=16, n_layers=1, n_heads=2, batch=2, length=5),
            learning=dict(n_tokens=2, n_symbols=4, d_model=8, n_layers=1, n_heads=2, steps=3, batch_size=4,
                          lr=1e-2, warmup=1))


def _help(command):
    out = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(out):
        cli.main([command, "--help"])
    return " ".join(out.getvalue().split())


# --- explain: a shape too large to print is refused before the work -----------------------------
def test_explain_refuses_a_shape_too_large_to_print_before_doing_any_work(monkeypatch, capsys):
    def step_through(*args, **kwargs):
        raise AssertionError("the step-through ran although the shape is refused")

    monkeypatch.setattr(explain, "step_through", step_through)
    with pytest.raises(SystemExit) as exc:
        cli.main(["explain", "layernorm", "--shape", "200x300"])
    err = " ".join(capsys.readouterr().err.split())
    assert exc.value.code == 2
    assert "argument --shape: 200x300 has 60000 values" in err
    assert f"at most {explain.MAX_VALUES} values (e.g. 16x16" in err
    assert max(len(line) for line in capsys.readouterr().err.splitlines() or [""]) <= 80


@pytest.mark.parametrize("text, allowed", [("16x16", True), ("4x4x4x4", True), ("4x8x8", True),
                                           ("16x17", False), ("2x2x2x2x17", False)])
def test_explain_allows_up_to_max_values(text, allowed):
    if allowed:
        assert len(explain.parse_shape(text)) == text.count("x") + 1
    else:
        with pytest.raises(Exception, match=f"at most {explain.MAX_VALUES} values"):
            explain.parse_shape(text)


def test_explain_help_states_the_limit():
    assert f"at most {explain.MAX_VALUES} values" in _help("explain")


# --- bench: the quick settings are the help text's, and every part shows progress ---------------
def test_bench_quick_runs_the_rounds_its_help_text_promises(monkeypatch):
    text = _help("bench")
    promised = re.search(r"(\d+) rounds of the norms instead of (\d+), after (\d+) warm-up round "
                         r"instead of (\d+); (\d+) rounds of the Transformer step instead of (\d+), on one "
                         r"thread only; no learning run", text)
    assert promised, text
    quick_r, full_r, quick_w, full_w, quick_s, full_s = map(int, promised.groups())
    assert (quick_r, quick_w, quick_s) == (bench.QUICK["repeats"], bench.QUICK["warmup"],
                                           bench.QUICK["step_repeats"])
    assert (full_r, full_w, full_s) == (bench.FULL["repeats"], bench.FULL["warmup"],
                                        bench.FULL["step_repeats"])
    assert "float32 at (4096, 768)" in text
    calls = {"norms": []}
    real_shape, real_step = bench.bench_shape, bench.bench_transformer

    def bench_shape(shape, dtype, repeats, torch, fast, warmup, progress):
        calls["norms"].append((shape, np.dtype(dtype).name, repeats, warmup))
        return real_shape((16, 64), dtype, repeats, torch, fast, warmup, progress)  # tiny, same rounds

    def bench_transformer(repeats, torch, cfg, progress, all_threads):
        calls["step"] = repeats, all_threads
        return real_step(repeats, torch, TINY["transformer"], progress, all_threads)

    def bench_learning(*args, **kwargs):
        raise AssertionError("--quick runs no learning run")

    monkeypatch.setattr(bench, "bench_shape", bench_shape)
    monkeypatch.setattr(bench, "bench_transformer", bench_transformer)
    monkeypatch.setattr(bench, "bench_learning", bench_learning)
    lines = []
    results, step, learned, targets = bench.run_bench(quick=True, torch=None, fast=None, out=lines.append)
    assert calls == {"norms": [((4096, 768), "float32", quick_r, quick_w)], "step": (quick_s, False)}
    assert list(step.times) == ["normcore 1t"]
    assert learned is None and "learning run: left out by --quick (normcore bench runs it)" in lines
    assert all(len(r.times["floor", "forward"]) == quick_r for r in results)


def test_bench_shows_the_progress_of_every_part(capsys):
    lines = []
    bench.run_bench(torch=None, fast=None, out=lines.append, progress=True, **TINY)
    err = capsys.readouterr().err
    for part in ("norms (16, 64) float32", "Transformer training step", "learning run, 3 steps:"):
        assert part in err, part
    assert err.count("100%") == 3  # the norms, the step, and fit's display of the learning run
    assert "round 2/2" in err and max(len(line) for line in err.splitlines()) <= 80
    quiet = bench.run_bench(torch=None, fast=None, out=lines.append, **TINY)
    assert len(quiet) == 4 and capsys.readouterr().err == ""


def test_the_bench_command_asks_for_progress_and_flushes_each_table_line(monkeypatch):
    seen = {}

    def run_bench(**kwargs):
        seen.update(kwargs)
        kwargs["out"]("a table line")

    monkeypatch.setattr("normcore.commands.bench.run_bench", run_bench)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["bench", "--quick", "--no-torch"]) == 0
    assert seen["quick"] is True and seen["progress"] is True and seen["torch"] is None
    assert out.getvalue() == "a table line\n"


# --- figures: the quick run is the tests' configuration, and its cost is stated -----------------
def test_figures_quick_help_states_the_cost_and_runs_the_quick_configuration(monkeypatch, tmp_path, capsys):
    text = _help("figures")
    assert "Most experiments" in text and "a few (warmup," in text  # not the old "quick" promise
    assert f"all {len(experiments.EXPERIMENTS)} take about" in text and "load of" in text
    said = " ".join(text.split())  # the full runs' cost too, and that they overwrite the figures
    assert "Without --quick" in said and "overwrites that figure in figures/" in said
    assert f"so all {len(experiments.EXPERIMENTS)} take hours" in said
    seen = []

    def run_and_plot(name, quick, outdir, seed, progress):
        seen.append(quick)
        progress(1, 2, "half way")
        return None, []

    monkeypatch.setattr("normcore.experiments.run_and_plot", run_and_plot)
    assert cli.main(["figures", "invariance", "warmup", "--quick", "--outdir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert seen == [True, True] and "[2/2] warmup" in err and "half way" in err


# --- the test suite: a quick command for a newcomer, the full one in CI -------------------------
def test_the_slow_marker_is_registered():
    config = configparser.ConfigParser()
    config.read(ROOT / "setup.cfg")
    markers = config["tool:pytest"]["markers"]
    assert re.search(r"^\s*slow:", markers, flags=re.M), markers


def test_the_readme_gives_a_smoke_command_beside_the_full_one():
    """Command 2b runs the smoke file, which exists; the deselecting command is named in the
    prose; CI runs every test, the smoke file's included."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    commands = [line for block in blocks for line in block.splitlines() if "-m pytest " in line]
    assert commands == [".venv/bin/python -m pytest tests/test_smoke.py"], commands
    assert (ROOT / "tests" / "test_smoke.py").is_file()
    assert '`.venv/bin/python -m pytest -m "not slow"`' in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert "not slow" not in ci and ".venv/bin/python -m pytest\n" in ci  # CI runs every test


def test_the_slow_modules_are_marked_whole():
    """The modules that are slow as a whole carry a module-level mark, so a new test added to
    them is deselected by the quick command too."""
    modules = ["test_torch_samples.py", "test_distributed_gloo.py", "test_types.py"]
    modules += [f"test_experiments_{name}.py" for name in experiments.EXPERIMENTS]
    for name in modules:
        tree = ast.parse((ROOT / "tests" / name).read_text())
        marks = [ast.unparse(node.value) for node in tree.body if isinstance(node, ast.Assign)
                 and [ast.unparse(t) for t in node.targets] == ["pytestmark"]]
        assert len(marks) == 1 and "pytest.mark.slow" in marks[0], name
