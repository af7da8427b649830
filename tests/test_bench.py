"""`normcore bench` on tiny shapes and few rounds: every implementation computes the same thing,
the floor is below every tier, the targets are the measured ratios, every line fits 80 columns.
No absolute timing is asserted: timings depend on the machine."""

import math

import numpy as np
import pytest

import normcore as nc
from normcore.cli import build_parser, main
from normcore.perf import baselines, cases, printing, runners, timing
from normcore.perf.bench import run_bench
from normcore.perf.targets import Target

TINY = dict(shapes=((64, 64), (4, 32, 16)), repeats=3, step_repeats=1, warmup=1,
            transformer=dict(vocab_size=11, d_model=16, n_layers=1, n_heads=2, batch=2, length=5),
            learning=dict(n_tokens=2, n_symbols=4, d_model=8, n_layers=1, n_heads=2, steps=3, batch_size=4,
                          lr=1e-2, warmup=1))


def _fast_or_skip():
    fast = cases.fast_tier()
    if fast is None:
        pytest.skip("normcore.fast is not in this installation")
    return fast


@pytest.fixture(scope="module")
def numpy_only():
    """One tiny run without torch (and with the fast tier when it is there), and what it printed."""
    lines = []
    results, step, learned, targets = run_bench(torch=None, out=lines.append, **TINY)
    return results, step, targets, "\n".join(lines), learned


@pytest.mark.parametrize("kind", cases.LAYERS)
@pytest.mark.parametrize("shape", [(16, 64), (4, 32, 8)])
def test_every_implementation_computes_the_same(kind, shape):
    """The tiers and torch get the same gamma and beta and agree, or their times compare nothing."""
    rng = np.random.default_rng(0)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    reference = cases.make_norm(nc.norms, kind, shape, np.float64)
    y, dx = reference.forward(x), reference.backward(dy)
    has_fast = cases.fast_tier() and kind not in cases.ONE_TIER  # DyT: the reference class serves both
    tiers = [cases.make_norm(cases.fast_tier(), kind, shape, np.float64)] if has_fast else []
    for layer in tiers:
        np.testing.assert_allclose(layer.forward(x), y, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(layer.backward(dy), dx, rtol=1e-9, atol=1e-12)
    torch = pytest.importorskip("torch", reason="PyTorch is the timing reference; not installed")
    module = baselines.make_torch_norm(torch, kind, shape, np.float64)
    xt = torch.from_numpy(x).requires_grad_(True)
    yt = module(xt)
    yt.backward(torch.from_numpy(dy))
    np.testing.assert_allclose(yt.detach().numpy(), y, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(xt.grad.numpy(), dx, rtol=1e-7, atol=1e-9)


def test_the_floor_copies_and_every_tier_is_read_against_it(numpy_only):
    """The floor is measured in the same rounds as every tier, and xF is the paired ratio.
    Which is faster is the benchmark's to print, not a test's to assert: a busy machine
    could reorder two timings although nothing is wrong."""
    results = numpy_only[0]
    assert len(results) == len(TINY["shapes"]) * len(cases.DTYPES) * len(cases.LAYERS)
    for r in results:
        for phase in cases.PHASES:
            assert len(r.times["floor", phase]) == TINY["repeats"]
            for impl in cases.TIERS:
                if r.has(impl):
                    assert len(r.times[impl, phase]) == TINY["repeats"]
                    expected = timing.paired_ratio(r.times[impl, phase], r.times["floor", phase])
                    assert r.over_floor(impl, phase) == expected, (r.layer, impl, phase)
    floor = baselines.FloorRunner(np.arange(6.0), -np.arange(6.0))
    timing.time_once(floor, "fwd+bwd")
    np.testing.assert_array_equal(floor.y, floor.x)
    np.testing.assert_array_equal(floor.dx, floor.dy)


def test_dyt_is_timed_once_in_the_same_rounds_as_the_other_norms(numpy_only):
    """DyT has no fast tier: one row per case, in the reference column, against the floor of the
    same rounds as LayerNorm and RMSNorm, its ratios the paired ones, printed as such."""
    results, out = numpy_only[0], numpy_only[3]
    fast = cases.fast_tier()
    dyt = [r for r in results if r.layer == "DyT"]
    assert len(dyt) == len(TINY["shapes"]) * len(cases.DTYPES)
    lines = out.splitlines()
    for r in dyt:
        assert r.has("reference") and not r.has("fast") and list(r.cache) == ["reference"]
        x = np.random.default_rng(1).standard_normal(r.shape).astype(r.dtype)
        layer = cases.make_norm(nc.norms, "DyT", r.shape, np.dtype(r.dtype))
        assert r.cache["reference"] == cases.forward_cache_ratio(layer, x)
        same_case = [o for o in results if (o.shape, o.dtype) == (r.shape, r.dtype)]
        assert {o.layer for o in same_case} == set(cases.LAYERS)
        for other in same_case:  # the floor of the same rounds
            for phase in cases.PHASES:
                assert other.times["floor", phase] == r.times["floor", phase]
        title = f"DyT (one tier) {r.shape} {r.dtype}: forward cache / x: reference"
        at = [i for i, line in enumerate(lines) if line.startswith(title)]
        assert len(at) == 1, title
        for phase, line in zip(cases.PHASES, lines[at[0] + 1:at[0] + 4], strict=True):
            assert len(r.times["reference", phase]) == TINY["repeats"]
            expected = timing.paired_ratio(r.times["reference", phase], r.times["floor", phase])
            assert r.over_floor("reference", phase) == expected
            ms_xf = printing.num(r.median_ms("reference", phase), 7) + printing.num(expected, 7, "x", 1)
            assert line.startswith(f"{phase:<8}{printing.num(r.median_ms('floor', phase), 7)}{ms_xf}")
            if fast:  # the fast column says n/a, and there is no fast/ref ratio
                assert line.split()[4:] == ["n/a", "n/a"]
    assert "DyT has no fast tier" in out


def test_every_printed_line_fits_80_columns(numpy_only):
    out = numpy_only[3]
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "floor" in out and "without PyTorch" in out and "targets" in out


def test_a_long_machine_description_is_wrapped(monkeypatch):
    monkeypatch.setattr(printing.os, "cpu_count", lambda: 12345678901234567890)
    lines = printing.machine_lines(None, None, 3, 1)
    assert max(map(len, lines)) <= 80 and "fast tier unavailable" in " ".join(lines)


def test_targets_are_the_measured_ratios(numpy_only):
    results, step, targets, out, _ = numpy_only
    by_what = {t.what: t for t in targets}
    assert len(targets) == 5
    for t in targets:
        assert t.what in out
        assert t.met == (t.measured <= t.limit)
    shape = TINY["shapes"][0]
    ln, rms = (next(r for r in results if (r.layer, r.shape, r.dtype) == (k, shape, "float32"))
               for k in ("LayerNorm", "RMSNorm"))
    rms_vs_ln = by_what["RMSNorm fwd+bwd / LayerNorm fwd+bwd"]
    if ln.has("fast"):
        expected = timing.paired_ratio(rms.times["fast", "fwd+bwd"], ln.times["fast", "fwd+bwd"])
        assert rms_vs_ln.measured == expected
        assert f"{expected:.2f}x" in out
        cache = by_what["forward cache / input bytes, largest"]
        assert cache.measured == max(r.cache["fast"] for r in results if "fast" in r.cache)
    else:
        assert math.isnan(rms_vs_ln.measured) and "unavailable" in out
    # without torch, the ratios to torch are not made up
    assert math.isnan(by_what["LayerNorm fwd+bwd / torch 1 thread"].measured)
    assert math.isnan(by_what["Transformer step / torch, 1 thread each"].measured)
    assert not step.error and set(step.times) == {"normcore 1t", "normcore Nt"}


def test_the_learning_run_is_timed_and_reported(numpy_only):
    """The learning test's run, timed by the benchmark instead of asserted on in a test."""
    learned, out = numpy_only[4], numpy_only[3]
    rounds, shown = learned.seconds, f"3 steps in {learned.median_seconds():.1f} s"
    assert not learned.error and len(rounds) == 1
    assert 0 <= learned.accuracy <= 1
    assert shown in out
    assert f"held-out token accuracy {learned.accuracy:.4f}" in out
    assert "Learning run" in out and "budget 60 s" in out


def test_the_learning_run_reads_its_time_against_the_budget():
    fast = runners.LearningResult([12.0, 11.0, 50.0], 0.999)
    slow = runners.LearningResult([61.0], 0.999)
    assert "250 steps in 12.0 s (median of 3 runs); budget 60 s: met" in printing.learning_table(fast)
    assert "250 steps in 61.0 s (median of 1 run); budget 60 s: MISSED" in printing.learning_table(slow)
    broken = runners.LearningResult(error="ImportError: no task")
    assert "unavailable: ImportError: no task" in printing.learning_table(broken)
    for result in (fast, slow, broken):
        assert max(map(len, printing.learning_table(result).splitlines())) <= 80


def test_the_learning_run_is_the_learning_tests_training():
    """The benchmark times the run the learning test checks (normcore.perf.cases.ReverseRun),
    with its configuration: 4 Pre-Norm blocks, 250 steps, reversing 8 tokens."""
    run = cases.ReverseRun()
    assert cases.LEARNING["steps"] == 250 and run.task.n_tokens == 8
    assert len(run.model.blocks) == 4 and all(b.position == "pre" for b in run.model.blocks)


def test_a_missed_target_says_so():
    missed = Target("x", 3.0, 2.5, 2.0)
    stretch = Target("y", 1.9, 2.5, 2.0)
    table = printing.targets_table([missed, stretch]).splitlines()
    assert table[2].count("MISSED") == 2 and "met" not in table[2]  # the target and the stretch goal
    assert table[3].count("met") == 2 and "MISSED" not in table[3]
    assert "3.00x" in table[2] and "1.90x" in table[3]
    longest = Target("Transformer step / torch, 1 thread each", 123.456, 2.5, 2.0, "a note " * 20)
    assert max(map(len, printing.targets_table([missed, longest]).splitlines())) <= 80


def test_without_the_fast_tier_the_reference_is_timed_and_the_targets_are_unavailable():
    lines = []
    results, _, _, targets = run_bench(torch=None, fast=None, out=lines.append,
                                          **dict(TINY, shapes=((16, 32),)))
    assert all(r.has("reference") and not r.has("fast") for r in results)
    assert all(math.isnan(t.measured) for t in targets)
    assert "fast tier unavailable" in "\n".join(lines) and max(map(len, lines)) <= 80


def test_bench_with_torch_measures_every_ratio():
    torch = pytest.importorskip("torch", reason="PyTorch is the timing reference; not installed")
    lines = []
    results, step, _, targets = run_bench(torch=torch, out=lines.append,
                                             **dict(TINY, shapes=((64, 64),), dtypes=(np.float32,)))
    out = "\n".join(lines)
    assert len(results) == len(cases.LAYERS) and all(r.has("torch 1t") and r.has("torch Nt") for r in results)
    assert {"torch 1t", "torch Nt"} <= set(step.times)
    for t in targets:
        if cases.fast_tier() or t.what.startswith("Transformer"):
            assert t.measured == t.measured, t.what
    ln = next(r for r in results if r.layer == "LayerNorm")
    if ln.has("fast"):
        assert targets[0].measured == ln.ratio("fast", "torch 1t", "fwd+bwd")
    dyt = next(r for r in results if r.layer == "DyT")  # against the bridge's twin, no fast tier
    assert not dyt.has("fast") and math.isnan(dyt.ratio("fast", "torch 1t", "fwd+bwd"))
    for phase in cases.PHASES:
        for impl in ("torch 1t", "torch Nt"):
            assert len(dyt.times[impl, phase]) == TINY["repeats"]
            assert dyt.over_floor(impl, phase) == timing.paired_ratio(dyt.times[impl, phase],
                                                                      dyt.times["floor", phase])
    assert "twin" in out and "to_torch(nc.DyT(...))" in out
    assert "fast/1t" in out and max(len(line) for line in out.splitlines()) <= 80


def test_transformer_step_reports_a_broken_model_instead_of_crashing(monkeypatch):
    def broken(*args, **kwargs):
        raise ImportError("no model")
    monkeypatch.setattr(runners.nn, "TinyTransformer", broken)
    step = runners.bench_transformer(1, torch=None)
    assert "ImportError: no model" in step.error
    assert "unavailable" in printing.step_table(step)


def test_cli_bench_has_a_description_and_an_example_and_runs(monkeypatch, capsys):
    help_text = build_parser()._subparsers._group_actions[0].choices["bench"].format_help()
    assert "memory floor" in help_text and "normcore bench --quick" in help_text
    calls = {}
    monkeypatch.setattr("normcore.commands.bench.run_bench", lambda **kw: calls.update(kw))
    assert main(["bench", "--quick", "--no-torch"]) == 0
    assert {k: calls[k] for k in ("quick", "torch", "progress")} == {"quick": True, "torch": None, "progress": True}


def test_the_timing_loop_runs_every_runner_once_per_round_in_a_rotating_order():
    calls = []

    class Runner(timing.LayerRunner):
        def __init__(self, name):
            self.name = name

        def forward(self):
            calls.append(self.name)

    times = timing.time_interleaved({n: Runner(n) for n in "abc"}, ("forward",), repeats=2, warmup=1)
    assert calls == list("abc" "bca" "cab")
    assert {k: len(v) for k, v in times.items()} == {(n, "forward"): 2 for n in "abc"}
