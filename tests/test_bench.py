"""`normcore bench` on tiny shapes: the baseline is right, every table and target is printed.
No timing is asserted: timings depend on the machine."""

import numpy as np
import pytest

import normcore.bench as bench
from normcore.cli import main


@pytest.mark.parametrize("kind", bench.LAYERS)
@pytest.mark.parametrize("shape", [(16, 64), (4, 32, 8)])
def test_textbook_baseline_matches_normcore(kind, shape):
    """The baseline computes the same thing, or its times would compare nothing."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    layer = bench.make_normcore(kind, shape, np.float64)
    textbook = bench.TextbookNorm(kind, bench._channels(kind, shape), np.float64)
    textbook.gamma, textbook.beta = layer.weight.data.copy(), None if layer.bias is None else layer.bias.data.copy()
    np.testing.assert_allclose(textbook.forward(x), layer.forward(x), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(textbook.backward(dy), layer.backward(dy), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(textbook.dgamma, layer.weight.grad, rtol=1e-10, atol=1e-12)


@pytest.fixture
def tiny(monkeypatch):
    monkeypatch.setattr(bench, "SHAPES", ((64, 64), (4, 32, 16)))
    monkeypatch.setattr(bench, "TRANSFORMER", dict(vocab_size=11, d_model=16, n_layers=1, n_heads=2, batch=2,
                                                   length=5))


def test_bench_prints_every_row_and_target_without_torch(tiny, capsys):
    results, step, targets = bench.run_bench(quick=False, torch=None)
    out = capsys.readouterr().out
    assert len(results) == len(bench.SHAPES) * len(bench.DTYPES) * len(bench.LAYERS)
    assert all(r.median_ms("normcore", p) > 0 and r.ratio("textbook", p) > 0 for r in results for p in bench.PHASES)
    assert not step.error and set(step.times) == {"normcore 1t", "normcore Nt"}
    assert len(targets) == 6 and "without PyTorch" in out
    for t in targets:
        assert t.what in out


def test_bench_with_torch_measures_the_ratios(tiny, capsys):
    torch = pytest.importorskip("torch", reason="PyTorch is the timing reference; not installed")
    results, step, targets = bench.run_bench(quick=True, torch=torch)
    out = capsys.readouterr().out
    assert len(results) == len(bench.LAYERS)
    assert {"torch 1t", "torch Nt"} <= set(step.times)
    assert all(t.measured == t.measured for t in targets), "every target has a measured ratio with torch"
    assert "/torch 1t" in out and all(("MISSED" if not t.met else "met") in out for t in targets)


def test_transformer_step_reports_a_broken_model_instead_of_crashing(monkeypatch):
    def broken(*args, **kwargs):
        raise ImportError("no model")
    monkeypatch.setattr(bench.nn, "TinyTransformer", broken)
    step = bench.bench_transformer(1, torch=None)
    assert "ImportError: no model" in step.error
    assert "unavailable" in bench._step_table(step)


def test_cli_has_the_bench_command(tiny, capsys):
    assert main(["bench", "--quick", "--no-torch"]) == 0
    assert "targets" in capsys.readouterr().out
