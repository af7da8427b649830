"""Timing normcore's norms and a Transformer training step, against a textbook NumPy version
and PyTorch; ``normcore bench`` prints what this module measures.

Every implementation of a case runs in the same process, interleaved (one run of each in
turn, repeated), so that a change in the machine's load hits all of them alike; the table
gives medians and the ratios of the medians. Three implementations of each norm:

* ``normcore``: the layers of this package.
* ``textbook``: the BASELINE, ``TextbookNorm`` below: the same formulas written the way a
  textbook or a first attempt writes them in NumPy, whole-array temporaries everywhere. It
  shows what the care in normcore's kernels buys.
* ``torch 1t`` and ``torch Nt``: PyTorch on the CPU with one thread and with its default
  number of threads, when torch is importable.

Shapes: (4096, 768) and (32, 128, 768). LayerNorm and RMSNorm normalise the last axis (768);
BatchNorm1d and GroupNorm (32 groups) take axis 1 as the channels (768 channels, or 128
channels of length 768).
"""

import contextlib
import os
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from . import nn, optim
from .norms import BatchNorm1d, GroupNorm, LayerNorm, RMSNorm

SHAPES = ((4096, 768), (32, 128, 768))
DTYPES = (np.float32, np.float64)
LAYERS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm")
PHASES = ("forward", "backward", "fwd+bwd")
GROUPS = 32
EPS = 1e-5

# The targets `normcore bench` checks, each against the ratio it is measured by.
NORM_VS_TORCH_TARGET = 2.5  # LN, RMSNorm, BN fwd+bwd, float32, (4096, 768), vs torch on one thread
RMS_VS_LN_TARGET = 0.8  # normcore RMSNorm fwd+bwd time / normcore LayerNorm's
CACHE_TARGET = 1.1  # forward cache bytes / input bytes
TRANSFORMER_TARGET = 1.5  # training step time vs PyTorch's
TRANSFORMER = dict(vocab_size=256, d_model=128, n_layers=4, n_heads=4, batch=32, length=64)


def _torch():
    """The torch module, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


class blas_threads:
    """Context manager: NumPy's OpenBLAS runs on ``n`` threads inside the ``with`` block.

    A multi-threaded BLAS on a busy machine can be many times slower than one thread, so the
    comparisons are made thread count for thread count. Found through the loaded library
    (Linux); does nothing where that is not possible.
    """

    def __init__(self, n):
        self.n, self.saved = n, []

    @staticmethod
    def _libs():
        import ctypes
        try:
            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "openblas" in line and ".so" in line})
        except OSError:
            return []
        libs = []
        for path in paths:
            lib = ctypes.CDLL(path)
            for prefix, suffix in (("scipy_openblas", "64_"), ("openblas", "64_"), ("openblas", "")):
                get, set_ = f"{prefix}_get_num_threads{suffix}", f"{prefix}_set_num_threads{suffix}"
                if hasattr(lib, get) and hasattr(lib, set_):
                    libs.append((getattr(lib, get), getattr(lib, set_)))
                    break
        return libs

    def __enter__(self):
        for get, set_ in self._libs():
            self.saved.append((set_, get()))
            set_(self.n)
        return self

    def __exit__(self, *exc):
        for set_, n in self.saved:
            set_(n)
        self.saved.clear()


# --- the baseline ------------------------------------------------------------------------------
class TextbookNorm:
    """BASELINE for the benchmark, not used by normcore: the textbook NumPy norm.

    The formulas exactly as written on paper, one NumPy expression each, with the temporaries
    they imply (``(x - mean)**2``, ``dy * x_hat``, ...) and no attention to passes or dtypes.
    ``kind`` is one of LAYERS; stats are over the last axis (LN, RMSNorm), over every axis but
    1 (BatchNorm1d), or over the groups of ``x.reshape(N, G, -1)`` (GroupNorm).
    """

    def __init__(self, kind, channels, dtype):
        self.kind = kind
        rng = np.random.default_rng(0)
        self.gamma = (1 + 0.1 * rng.standard_normal(channels)).astype(dtype)
        self.beta = (0.1 * rng.standard_normal(channels)).astype(dtype) if kind != "RMSNorm" else None

    def _stats_view(self, x):
        """(x reshaped for the statistics, the axes they run over, the view gamma and beta take)."""
        if self.kind in ("LayerNorm", "RMSNorm"):
            return x, (-1,), self.gamma.shape
        view = (1, x.shape[1]) + (1,) * (x.ndim - 2)
        if self.kind == "BatchNorm1d":
            return x, (0,) + tuple(range(2, x.ndim)), view
        return x.reshape(x.shape[0], GROUPS, -1), (-1,), view

    def forward(self, x):
        xs, axes, view = self._stats_view(x)
        if self.kind == "RMSNorm":
            rstd = 1 / np.sqrt(np.mean(xs ** 2, axis=axes, keepdims=True) + EPS)
            x_hat = xs * rstd
        else:
            mean = np.mean(xs, axis=axes, keepdims=True)
            var = np.mean((xs - mean) ** 2, axis=axes, keepdims=True)
            rstd = 1 / np.sqrt(var + EPS)
            x_hat = (xs - mean) * rstd
        x_hat = x_hat.reshape(x.shape)
        self.cache = (x_hat, rstd, view)
        y = x_hat * self.gamma.reshape(view)
        return y if self.beta is None else y + self.beta.reshape(view)

    def backward(self, dy):
        x_hat, rstd, view = self.cache
        channel_axis = dy.ndim - 1 if self.kind in ("LayerNorm", "RMSNorm") else 1
        sum_axes = tuple(i for i in range(dy.ndim) if i != channel_axis)
        self.dgamma = np.sum(dy * x_hat, axis=sum_axes)
        self.dbeta = None if self.beta is None else np.sum(dy, axis=sum_axes)
        dx_hat = dy * self.gamma.reshape(view)
        dxs, axes, _ = self._stats_view(dx_hat)
        xs_hat, _, _ = self._stats_view(x_hat)
        dx = dxs - xs_hat * np.mean(dxs * xs_hat, axis=axes, keepdims=True)
        if self.kind != "RMSNorm":
            dx = dx - np.mean(dxs, axis=axes, keepdims=True)
        return (rstd * dx).reshape(dy.shape)


# --- runners: one object per implementation, with forward() and backward() ---------------------
def _channels(kind, shape):
    return shape[-1] if kind in ("LayerNorm", "RMSNorm") else shape[1]


def make_normcore(kind, shape, dtype):
    c = _channels(kind, shape)
    layer = {"LayerNorm": lambda: LayerNorm(c, dtype=dtype), "RMSNorm": lambda: RMSNorm(c, eps=EPS, dtype=dtype),
             "BatchNorm1d": lambda: BatchNorm1d(c, dtype=dtype),
             "GroupNorm": lambda: GroupNorm(GROUPS, c, dtype=dtype)}[kind]()
    rng = np.random.default_rng(0)
    layer.weight.data[...] = 1 + 0.1 * rng.standard_normal(c)
    if layer.bias is not None:
        layer.bias.data[...] = 0.1 * rng.standard_normal(c)
    return layer


class _NumpyRunner:
    """Runs a NumPy layer (normcore's or the textbook one) on a fixed input and gradient."""

    def __init__(self, layer, x, dy):
        self.layer, self.x, self.dy = layer, x, dy

    def prepare(self):
        pass

    def forward(self):
        self.layer.forward(self.x)

    def backward(self):
        self.layer.backward(self.dy)


class _TorchRunner:
    """Runs a torch module with ``threads`` threads; backward() uses the last forward's graph."""

    def __init__(self, torch, module, x, dy, threads):
        self.torch, self.module, self.threads = torch, module, threads
        self.x = torch.from_numpy(x).requires_grad_(True)
        self.dy = torch.from_numpy(dy)

    def prepare(self):
        self.torch.set_num_threads(self.threads)
        self.x.grad = None

    def forward(self):
        self.y = self.module(self.x)

    def backward(self):
        self.y.backward(self.dy)


def make_torch_norm(torch, kind, shape, dtype):
    c = _channels(kind, shape)
    tdtype = torch.float32 if dtype == np.float32 else torch.float64
    module = {"LayerNorm": lambda: torch.nn.LayerNorm(c, dtype=tdtype),
              "RMSNorm": lambda: torch.nn.RMSNorm(c, eps=EPS, dtype=tdtype),
              "BatchNorm1d": lambda: torch.nn.BatchNorm1d(c, dtype=tdtype),
              "GroupNorm": lambda: torch.nn.GroupNorm(GROUPS, c, dtype=tdtype)}[kind]()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(1 + 0.1 * rng.standard_normal(c)))
        if getattr(module, "bias", None) is not None:
            module.bias.copy_(torch.from_numpy(0.1 * rng.standard_normal(c)))
    return module


# --- timing ------------------------------------------------------------------------------------
def _time(runner, phase):
    """Seconds one ``phase`` of ``runner`` takes; a backward is preceded by an untimed forward."""
    runner.prepare()
    if phase == "backward":
        runner.forward()
    start = time.perf_counter()
    if phase != "backward":
        runner.forward()
    if phase != "forward":
        runner.backward()
    return time.perf_counter() - start


def time_interleaved(runners, phases, repeats, warmup=2):
    """{(name, phase): [seconds of each round]}: every runner and phase once per round."""
    times = {(name, phase): [] for name in runners for phase in phases}
    for round_ in range(warmup + repeats):
        for phase in phases:
            for name, runner in runners.items():
                t = _time(runner, phase)
                if round_ >= warmup:
                    times[name, phase].append(t)
    return times


def paired_ratio(a, b):
    """The median over rounds of a[i] / b[i]: the two runs of one round saw the same machine
    load, so their ratio is steadier than the ratio of the two medians on a busy machine."""
    return statistics.median(x / y for x, y in zip(a, b))


def cache_bytes(obj):
    """Bytes of the NumPy arrays in ``obj`` (an array, or tuples/lists of them and of scalars)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(cache_bytes(o) for o in obj)
    return 0


@dataclass
class NormResult:
    layer: str
    shape: tuple
    dtype: str
    times: dict  # (implementation, phase) -> seconds of each round
    cache_ratio: float  # bytes of normcore's forward cache / bytes of the input

    def median_ms(self, impl, phase):
        return statistics.median(self.times[impl, phase]) * 1e3

    def ratio(self, other, phase):
        """normcore's time / the other implementation's, paired by round."""
        return paired_ratio(self.times["normcore", phase], self.times[other, phase])


def bench_shape(shape, dtype, repeats, torch=None):
    """A NormResult per layer in LAYERS: all layers and implementations interleaved in each round."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    runners = {}
    for kind in LAYERS:
        runners[kind, "normcore"] = _NumpyRunner(make_normcore(kind, shape, dtype), x, dy)
        runners[kind, "textbook"] = _NumpyRunner(TextbookNorm(kind, _channels(kind, shape), dtype), x, dy)
        if torch is not None:
            module = make_torch_norm(torch, kind, shape, dtype)
            runners[kind, "torch 1t"] = _TorchRunner(torch, module, x, dy, 1)
            runners[kind, "torch Nt"] = _TorchRunner(torch, module, x, dy, _default_threads(torch))
    times = time_interleaved(runners, PHASES, repeats)
    results = []
    for kind in LAYERS:
        layer = runners[kind, "normcore"].layer
        layer.forward(x)
        results.append(NormResult(kind, shape, np.dtype(dtype).name,
                                  {(impl, phase): ts for ((k, impl), phase), ts in times.items() if k == kind},
                                  cache_bytes(layer._cache) / x.nbytes))
    return results


_DEFAULT_THREADS = []


def _default_threads(torch):
    """torch's default thread count, read once before this module changes it."""
    if not _DEFAULT_THREADS:
        _DEFAULT_THREADS.append(torch.get_num_threads())
    return _DEFAULT_THREADS[0]


# --- the Transformer training step -------------------------------------------------------------
def _transformer_data(cfg):
    rng = np.random.default_rng(2)
    shape = (cfg["batch"], cfg["length"])
    return rng.integers(0, cfg["vocab_size"], shape), rng.integers(0, cfg["vocab_size"], shape)


class _NumpyTransformerStep:
    """One training step of normcore's TinyTransformer: forward, loss, backward, AdamW."""

    def __init__(self, cfg, threads):
        self.threads = threads
        self.model = nn.TinyTransformer(cfg["vocab_size"], cfg["d_model"], cfg["n_layers"], cfg["n_heads"],
                                        cfg["length"], rng=0, dtype=np.float32)
        self.loss = nn.CrossEntropyLoss()
        self.opt = optim.AdamW(self.model.parameters(), lr=1e-3)
        self.tokens, self.targets = _transformer_data(cfg)

    def prepare(self):
        return blas_threads(self.threads)

    def step(self):
        self.opt.zero_grad()
        self.loss(self.model(self.tokens), self.targets)
        self.model.backward(self.loss.backward())
        self.opt.step()


class _TorchTransformerStep:
    """The same model in PyTorch (pre-norm blocks, causal attention, tanh-GELU), same step."""

    def __init__(self, torch, cfg, threads):
        self.torch, self.threads = torch, threads
        self.model = _torch_transformer(torch, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        tokens, targets = _transformer_data(cfg)
        self.tokens, self.targets = torch.from_numpy(tokens), torch.from_numpy(targets)

    def prepare(self):
        self.torch.set_num_threads(self.threads)
        return contextlib.nullcontext()

    def step(self):
        self.opt.zero_grad()
        logits = self.model(self.tokens)
        loss = self.torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), self.targets.reshape(-1))
        loss.backward()
        self.opt.step()


def _torch_transformer(torch, cfg):
    """A PyTorch model with the architecture of normcore's pre-norm TinyTransformer."""
    F, d, h = torch.nn.functional, cfg["d_model"], cfg["n_heads"]

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
            self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d, bias=name != "k") for name in "qkvo")
            self.fc1, self.fc2 = torch.nn.Linear(d, 4 * d), torch.nn.Linear(4 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            z = self.norm1(x)
            heads = lambda t: t.view(B, T, h, C // h).transpose(1, 2)  # noqa: E731
            a = F.scaled_dot_product_attention(heads(self.q(z)), heads(self.k(z)), heads(self.v(z)), is_causal=True)
            x = x + self.o(a.transpose(1, 2).reshape(B, T, C))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x)), approximate="tanh"))

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tok_emb = torch.nn.Embedding(cfg["vocab_size"], d)
            self.pos_emb = torch.nn.Embedding(cfg["length"], d)
            self.blocks = torch.nn.Sequential(*(Block() for _ in range(cfg["n_layers"])))
            self.norm_f, self.head = torch.nn.LayerNorm(d), torch.nn.Linear(d, cfg["vocab_size"])

        def forward(self, tokens):
            x = self.tok_emb(tokens) + self.pos_emb(torch.arange(tokens.shape[1]))
            return self.head(self.norm_f(self.blocks(x)))

    return Model().to(torch.float32)


@dataclass
class StepResult:
    times: dict = field(default_factory=dict)  # implementation -> seconds of the step in each round
    error: str = ""  # why the step could not be measured, if it could not

    def median_ms(self, impl):
        return statistics.median(self.times[impl]) * 1e3

    def ratio(self, threads):
        """normcore's step time / torch's, both on one thread ("1t") or on all ("Nt"), paired by round."""
        return paired_ratio(self.times["normcore " + threads], self.times["torch " + threads])


def bench_transformer(repeats, torch=None, cfg=None):
    cfg = TRANSFORMER if cfg is None else cfg
    threads = os.cpu_count() or 1
    try:
        steps = {"normcore 1t": _NumpyTransformerStep(cfg, 1), "normcore Nt": _NumpyTransformerStep(cfg, threads)}
    except Exception as exc:  # the model or the optimizer is missing or broken
        return StepResult(error=f"{type(exc).__name__}: {exc}")
    if torch is not None:
        steps["torch 1t"] = _TorchTransformerStep(torch, cfg, 1)
        steps["torch Nt"] = _TorchTransformerStep(torch, cfg, _default_threads(torch))
    times = {name: [] for name in steps}
    for round_ in range(1 + repeats):
        for name, s in steps.items():
            with s.prepare():
                start = time.perf_counter()
                s.step()
                if round_:
                    times[name].append(time.perf_counter() - start)
    return StepResult(times)


# --- the whole benchmark -----------------------------------------------------------------------
@dataclass
class Target:
    what: str
    measured: float  # NaN when it could not be measured
    limit: float
    note: str = ""

    @property
    def met(self):
        return self.measured <= self.limit


def run_bench(quick=False, torch="auto", out=print):
    """Measure everything, print the tables as it goes, and return (norm results, step, targets)."""
    torch = _torch() if torch == "auto" else torch
    if torch is not None:
        _default_threads(torch)
    shapes, dtypes = (SHAPES[:1], DTYPES[:1]) if quick else (SHAPES, DTYPES)
    repeats, step_repeats = (7, 5) if quick else (15, 12)
    out(machine_line(torch))
    out(_norm_header(torch))
    results = []
    for shape in shapes:
        for dtype in dtypes:
            with blas_threads(1):
                rows = bench_shape(shape, dtype, repeats, torch)
            results += rows
            for r in rows:
                for line in _norm_rows(r, torch):
                    out(line)
    out("")
    step = bench_transformer(step_repeats, torch)
    out(_step_table(step))
    out("")
    targets = compute_targets(results, step, torch)
    out(_targets_table(targets))
    return results, step, targets


def machine_line(torch):
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    tv = f"torch {torch.__version__} ({_default_threads(torch)} default threads)" if torch else "without PyTorch: not installed, or --no-torch"
    return (f"machine: {model}, {os.cpu_count()} logical cores, load average {load}; numpy {np.__version__}; {tv}\n"
            "times: median ms of interleaved rounds; ratios: median over rounds of normcore's time / the other's; "
            "norms: NumPy's BLAS on one thread")


def _norm_header(torch):
    cols = ["normcore", "textbook"] + (["torch 1t", "torch Nt"] if torch else [])
    ratios = ["/textbook"] + (["/torch 1t", "/torch Nt"] if torch else [])
    head = f"{'layer':<12} {'shape':<15} {'dtype':<8} {'phase':<8} " + " ".join(f"{c:>9}" for c in cols)
    head += "  " + " ".join(f"{r:>10}" for r in ratios) + f"  {'cache':>6}"
    return head + "\n" + "-" * len(head)


def _norm_rows(r, torch):
    others = ["textbook"] + (["torch 1t", "torch Nt"] if torch else [])
    for phase in PHASES:
        ms = [r.median_ms(impl, phase) for impl in ["normcore"] + others]
        ratios = [r.ratio(o, phase) for o in others]
        cache = f"{r.cache_ratio:>5.3f}x" if phase == "forward" else ""
        yield (f"{r.layer:<12} {str(r.shape):<15} {r.dtype:<8} {phase:<8} " + " ".join(f"{m:>9.2f}" for m in ms)
               + "  " + " ".join(f"{q:>9.2f}x" for q in ratios) + f"  {cache:>6}")


def _step_table(step):
    cfg = TRANSFORMER
    title = (f"Transformer training step (forward, cross-entropy, backward, AdamW), float32: {cfg['n_layers']} "
             f"pre-norm layers, d_model {cfg['d_model']}, {cfg['n_heads']} heads, batch {cfg['batch']}, "
             f"length {cfg['length']}, vocab {cfg['vocab_size']}; 1t / Nt: one thread / all threads "
             "(NumPy's BLAS, torch)")
    if step.error:
        return title + f"\n  unavailable: {step.error}"
    lines = [title]
    for name in step.times:
        threads = name.split()[-1]
        ratio = f"  normcore {threads} / {name}: {step.ratio(threads):.2f}x" if name.startswith("torch") else ""
        lines.append(f"  {name:<12} {step.median_ms(name):8.1f} ms{ratio}")
    return "\n".join(lines)


def compute_targets(results, step, torch):
    nan = float("nan")
    by = {(r.layer, r.shape, r.dtype): r for r in results}
    key = lambda layer: (layer, SHAPES[0], "float32")  # noqa: E731
    targets = []
    for layer in ("LayerNorm", "RMSNorm", "BatchNorm1d"):
        r = by.get(key(layer))
        ratio = r.ratio("torch 1t", "fwd+bwd") if r and torch else nan
        targets.append(Target(f"{layer} fwd+bwd float32 {SHAPES[0]} vs torch 1 thread", ratio, NORM_VS_TORCH_TARGET,
                              "" if torch else "without PyTorch: not installed, or --no-torch"))
    ln, rms = by.get(key("LayerNorm")), by.get(key("RMSNorm"))
    targets.append(Target(f"RMSNorm fwd+bwd vs LayerNorm's, float32 {SHAPES[0]}",
                          paired_ratio(rms.times["normcore", "fwd+bwd"], ln.times["normcore", "fwd+bwd"]),
                          RMS_VS_LN_TARGET))
    worst = max(results, key=lambda r: r.cache_ratio)
    targets.append(Target("forward cache / input bytes, largest over the float32/float64 cases", worst.cache_ratio,
                          CACHE_TARGET, f"{worst.layer} {worst.shape} {worst.dtype}"))
    if step.error or "torch 1t" not in step.times:
        targets.append(Target("Transformer training step vs torch, 1 thread each", nan, TRANSFORMER_TARGET,
                              step.error or "without PyTorch: not installed, or --no-torch"))
    else:
        targets.append(Target("Transformer training step vs torch, 1 thread each", step.ratio("1t"),
                              TRANSFORMER_TARGET, f"all threads each: {step.ratio('Nt'):.2f}x"))
    return targets


def _targets_table(targets):
    width = max(len(t.what) for t in targets)
    lines = ["targets", f"{'':<{width}}  {'measured':>8}  {'target':>7}  result"]
    for t in targets:
        measured = "n/a" if t.measured != t.measured else f"{t.measured:.2f}x"
        result = "unavailable" if t.measured != t.measured else ("met" if t.met else "MISSED")
        note = f"  ({t.note})" if t.note else ""
        lines.append(f"{t.what:<{width}}  {measured:>8}  {'<= ' + format(t.limit, 'g') + 'x':>7}  {result}{note}")
    return "\n".join(lines)
