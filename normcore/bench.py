"""Timing normcore's norms, both tiers, against PyTorch and against the memory floor, and a
Transformer training step; ``normcore bench`` prints what this module measures.

Every implementation of a case runs in the same process, interleaved round by round (one run
of each in turn, repeated, in an order that rotates from round to round: ``normcore._timing``),
so that a change in the machine's load hits all of them alike. Times are medians; ratios are medians over rounds of the ratio of two times
taken in the same round. The implementations of each norm:

* ``reference``: ``nc.LayerNorm`` and the others, the readable whole-array tier.
* ``fast``: ``normcore.fast.LayerNorm`` and the others, the cache-blocked tier (when present).
* ``torch 1t`` and ``torch Nt``: PyTorch on the CPU with one thread and with its default
  number of threads, when torch is importable.
* ``floor``, the MEMORY FLOOR: the passes over the data that no implementation can avoid, as
  copies into preallocated arrays (``np.copyto``). A forward must read x and write y: a copy
  of x. A backward must read dy and write dx: a copy of dy (it also reads x or its cache, so
  this floor is a lower bound). Forward + backward: both copies. Each tier's time is also
  shown as a multiple of the floor of the same round: how far it is from the limit.

Shapes: (4096, 768) and (32, 128, 768). LayerNorm and RMSNorm normalise the last axis (768);
BatchNorm1d and GroupNorm (32 groups) take axis 1 as the channels (768 channels, or 128
channels of length 768). NumPy's BLAS runs on one thread for the norms.
"""

import contextlib
import importlib
import math
import os
import textwrap
from dataclasses import dataclass, field

import numpy as np

from . import nn, norms, optim
from ._threads import blas_threads
from ._timing import LayerRunner, keep_freed_memory, median, paired_ratio, time_interleaved
from .train import loss_and_backward

SHAPES = ((4096, 768), (32, 128, 768))
DTYPES = (np.float32, np.float64)
LAYERS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "GroupNorm")
PHASES = ("forward", "backward", "fwd+bwd")
TIERS = ("reference", "fast")
GROUPS = 32
EPS = 1e-5
WIDTH = 80  # every line printed fits in 80 columns

# The targets of the FAST tier, float32 at SHAPES[0], each against the ratio it is measured by.
FAST_VS_TORCH_TARGET = 2.5  # LayerNorm and BatchNorm1d fwd+bwd time / torch's on one thread
FAST_VS_TORCH_STRETCH = 2.0  # the stretch goal for the same ratio
RMS_VS_LN_TARGET = 0.8  # fast RMSNorm fwd+bwd time / fast LayerNorm's
CACHE_TARGET = 1.1  # fast forward cache bytes / input bytes, the largest over the cases
TRANSFORMER_TARGET = 1.5  # training step time vs PyTorch's, one thread each
TRANSFORMER = dict(vocab_size=256, d_model=128, n_layers=4, n_heads=4, batch=32, length=64)

NOT_TORCH = "without PyTorch: not installed, or --no-torch"


def _torch():
    """The torch module, or None when it is not installed."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def _fast():
    """``normcore.fast``, or None when this installation has no fast tier (imported lazily)."""
    try:
        return importlib.import_module("normcore.fast")
    except ImportError:
        return None


# --- the implementations: one runner each, with context(), forward() and backward() ------------
def _channels(kind, shape):
    return shape[-1] if kind in ("LayerNorm", "RMSNorm") else shape[1]


def _affine_values(c):
    """The gamma and beta every implementation of a case gets: the same random values."""
    rng = np.random.default_rng(0)
    return 1 + 0.1 * rng.standard_normal(c), 0.1 * rng.standard_normal(c)


def make_norm(tier, kind, shape, dtype):
    """Layer ``kind`` of ``tier`` (``normcore.norms`` or ``normcore.fast``) for input ``shape``."""
    c = _channels(kind, shape)
    layer = {"LayerNorm": lambda: tier.LayerNorm(c, dtype=dtype),
             "RMSNorm": lambda: tier.RMSNorm(c, eps=EPS, dtype=dtype),
             "BatchNorm1d": lambda: tier.BatchNorm1d(c, dtype=dtype),
             "GroupNorm": lambda: tier.GroupNorm(GROUPS, c, dtype=dtype)}[kind]()
    gamma, beta = _affine_values(c)
    layer.weight.data[...] = gamma
    if layer.bias is not None:
        layer.bias.data[...] = beta
    return layer


def make_torch_norm(torch, kind, shape, dtype):
    c = _channels(kind, shape)
    tdtype = torch.float32 if dtype == np.float32 else torch.float64
    module = {"LayerNorm": lambda: torch.nn.LayerNorm(c, dtype=tdtype),
              "RMSNorm": lambda: torch.nn.RMSNorm(c, eps=EPS, dtype=tdtype),
              "BatchNorm1d": lambda: torch.nn.BatchNorm1d(c, dtype=tdtype),
              "GroupNorm": lambda: torch.nn.GroupNorm(GROUPS, c, dtype=tdtype)}[kind]()
    gamma, beta = _affine_values(c)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(gamma))
        if getattr(module, "bias", None) is not None:
            module.bias.copy_(torch.from_numpy(beta))
    return module


class _TorchRunner:
    """Runs a torch module with ``threads`` threads; backward() uses the last forward's graph."""

    def __init__(self, torch, module, x, dy, threads):
        self.torch, self.module, self.threads = torch, module, threads
        self.x = torch.from_numpy(x).requires_grad_(True)
        self.dy = torch.from_numpy(dy)

    def context(self):
        self.torch.set_num_threads(self.threads)
        self.x.grad = None
        return contextlib.nullcontext()

    def forward(self):
        self.y = self.module(self.x)

    def backward(self):
        self.y.backward(self.dy)


class FloorRunner:
    """The memory floor: forward reads x and writes y, backward reads dy and writes dx, as
    ``np.copyto`` into arrays allocated once. No norm can make fewer passes over the data."""

    def __init__(self, x, dy):
        self.x, self.dy = x, dy
        self.y, self.dx = np.empty_like(x), np.empty_like(dy)

    def context(self):
        return contextlib.nullcontext()

    def forward(self):
        np.copyto(self.y, self.x)

    def backward(self):
        np.copyto(self.dx, self.dy)


_DEFAULT_THREADS = []


def _default_threads(torch):
    """torch's default thread count, read once before this module changes it."""
    if not _DEFAULT_THREADS:
        _DEFAULT_THREADS.append(torch.get_num_threads())
    return _DEFAULT_THREADS[0]


# --- the norms ---------------------------------------------------------------------------------
def cache_bytes(obj):
    """Bytes of the NumPy arrays in ``obj`` (an array, or tuples/lists of them and of scalars)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if isinstance(obj, (tuple, list)):
        return sum(cache_bytes(o) for o in obj)
    return 0


def forward_cache_ratio(layer, x):
    """Bytes a layer keeps from ``forward(x)`` for its backward (``Module``'s ``_cache``), over
    x's bytes; NaN when the layer keeps no such cache."""
    layer.forward(x)
    cache = layer.__dict__.get("_cache")
    return float("nan") if cache is None else cache_bytes(cache) / x.nbytes


@dataclass
class NormResult:
    layer: str
    shape: tuple
    dtype: str
    times: dict  # (implementation, phase) -> seconds of each round; "floor" is the memory floor
    cache: dict  # tier -> bytes of its forward cache / bytes of the input

    def has(self, impl):
        return (impl, PHASES[0]) in self.times

    def median_ms(self, impl, phase):
        return median(self.times[impl, phase]) * 1e3 if self.has(impl) else math.nan

    def ratio(self, impl, other, phase):
        """impl's time / other's, paired by round; NaN when either was not measured."""
        if not (self.has(impl) and self.has(other)):
            return math.nan
        return paired_ratio(self.times[impl, phase], self.times[other, phase])

    def over_floor(self, impl, phase):
        """impl's time as a multiple of the memory floor's, paired by round."""
        return self.ratio(impl, "floor", phase)


def bench_shape(shape, dtype, repeats, torch=None, fast=None, warmup=2):
    """A NormResult per layer in LAYERS: every layer, implementation and the floor in each round."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    tiers = {"reference": norms, "fast": fast}
    runners = {("floor", "floor"): FloorRunner(x, dy)}
    for kind in LAYERS:
        for name, tier in tiers.items():
            if tier is not None:
                runners[kind, name] = LayerRunner(make_norm(tier, kind, shape, dtype), x, dy)
        if torch is not None:
            module = make_torch_norm(torch, kind, shape, dtype)
            runners[kind, "torch 1t"] = _TorchRunner(torch, module, x, dy, 1)
            runners[kind, "torch Nt"] = _TorchRunner(torch, module, x, dy, _default_threads(torch))
    with blas_threads(1):
        times = time_interleaved(runners, PHASES, repeats, warmup)
    floor = {("floor", phase): times[("floor", "floor"), phase] for phase in PHASES}
    results = []
    for kind in LAYERS:
        mine = {(name[1], phase): ts for (name, phase), ts in times.items() if name[0] == kind}
        cache = {name: forward_cache_ratio(runners[kind, name].layer, x) for name in TIERS
                 if (kind, name) in runners}
        results.append(NormResult(kind, tuple(shape), np.dtype(dtype).name, {**mine, **floor}, cache))
    return results


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

    def context(self):
        return blas_threads(self.threads)

    def step(self):
        self.opt.zero_grad()
        loss_and_backward(self.model, self.loss, self.model(self.tokens), self.targets)
        self.opt.step()


class _TorchTransformerStep:
    """The same model in PyTorch (pre-norm blocks, causal attention, exact GELU), same step."""

    def __init__(self, torch, cfg, threads):
        self.torch, self.threads = torch, threads
        self.model = _torch_transformer(torch, cfg)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-3)
        tokens, targets = _transformer_data(cfg)
        self.tokens, self.targets = torch.from_numpy(tokens), torch.from_numpy(targets)

    def context(self):
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
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))

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
        return median(self.times[impl]) * 1e3

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
    times = time_interleaved(steps, ("step",), repeats, warmup=1)
    return StepResult({name: ts for (name, _), ts in times.items()})


# --- the whole benchmark -----------------------------------------------------------------------
@dataclass
class Target:
    what: str
    measured: float  # NaN when it could not be measured
    limit: float
    stretch: float = math.nan  # the stretch goal, when the target has one
    note: str = ""

    @property
    def met(self):
        return self.measured <= self.limit

    @property
    def stretch_met(self):
        return self.measured <= self.stretch


def run_bench(quick=False, torch="auto", fast="auto", out=print, shapes=None, dtypes=None, repeats=None,
              step_repeats=None, transformer=None, warmup=2):
    """Measure everything, print the tables as it goes, and return (norm results, step, targets).

    ``torch`` and ``fast`` are the modules to compare, None to leave them out, or "auto" to
    import them if they are installed. The keyword arguments after ``out`` replace the sizes
    ``quick`` picks (the tests use tiny ones); the targets are read at the first shape.
    """
    torch = _torch() if torch == "auto" else torch
    fast = _fast() if fast == "auto" else fast
    if torch is not None:
        _default_threads(torch)
    keep_freed_memory()  # time the arithmetic, not the page faults of fresh arrays
    shapes = shapes or (SHAPES[:1] if quick else SHAPES)
    dtypes = dtypes or (DTYPES[:1] if quick else DTYPES)
    repeats = repeats or (7 if quick else 15)
    step_repeats = step_repeats or (5 if quick else 12)
    for line in machine_lines(torch, fast, repeats, warmup):
        out(line)
    out("")
    for line in norm_header(torch, fast):
        out(line)
    results = []
    for shape in shapes:
        for dtype in dtypes:
            rows = bench_shape(shape, dtype, repeats, torch, fast, warmup)
            results += rows
            for r in rows:
                for line in norm_rows(r, torch, fast):
                    out(line)
    out("")
    step = bench_transformer(step_repeats, torch, transformer)
    for line in step_table(step, transformer).splitlines() + [""]:
        out(line)
    targets = compute_targets(results, step, torch, fast, shapes[0])
    for line in targets_table(targets, shapes[0]).splitlines():
        out(line)
    return results, step, targets


def _wrap(text, indent=""):
    return textwrap.wrap(text, WIDTH, subsequent_indent=indent, break_on_hyphens=False)


def machine_lines(torch, fast, repeats, warmup):
    """What ran where, and how to read the tables, wrapped to WIDTH columns."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    tv = f"torch {torch.__version__} ({_default_threads(torch)} default threads)" if torch else NOT_TORCH
    fv = "normcore.fast" if fast else "fast tier unavailable (normcore.fast is not installed)"
    lines = _wrap(f"machine: {model}, {os.cpu_count()} logical cores, load average {load}", "  ")
    lines += _wrap(f"numpy {np.__version__}, its BLAS on 1 thread for the norms; {tv}; {fv}", "  ")
    lines += _wrap(f"times: median ms of {repeats} interleaved rounds (after {warmup} warm-up rounds). "
                   "floor: the memory floor measured in the same rounds, the passes over the data no "
                   "implementation can avoid, as np.copyto: forward = a copy of x (read x, write y), "
                   "backward = a copy of dy (read dy, write dx), fwd+bwd = both. xF: a time as a "
                   "multiple of the floor; fast/1t (fast/ref without torch): the fast tier's time over "
                   "torch's on one thread (over the reference tier's); both are medians over rounds of "
                   "the ratio of two times of the same round.")
    return lines


def _columns(torch, fast):
    return ["reference"] + (["fast"] if fast else []) + (["torch 1t", "torch Nt"] if torch else [])


def _ratio_against(torch):
    """(the implementation the fast tier is compared with in the tables, the column's name)."""
    return ("torch 1t", "fast/1t") if torch else ("reference", "fast/ref")


def _num(value, width, suffix="", decimals=2):
    """``value`` right-aligned in ``width`` columns (suffix included), with as many decimals as
    fit, at most ``decimals``; "n/a" for NaN."""
    if value != value:
        return f"{'n/a':>{width}}"
    for decimals in range(decimals, -1, -1):
        text = f"{value:.{decimals}f}{suffix}"
        if len(text) <= width - 1:  # keep a space before it
            break
    return f"{text:>{width}}"


def norm_header(torch, fast):
    cols = _columns(torch, fast)
    first = f"{'':<8}{'floor':>7}" + "".join(f"{c:>14}" for c in cols)
    first += f"{_ratio_against(torch)[1]:>9}" if fast else ""
    second = f"{'phase':<8}{'ms':>7}" + "".join(f"{'ms':>7}{'xF':>7}" for _ in cols)
    return [first, second, "-" * len(first)]


def norm_rows(r, torch, fast):
    """A title line for the case (with the forward caches), then one line per phase."""
    cache = ", ".join(f"{tier} {_num(c, 8, 'x').strip()}" for tier, c in r.cache.items())
    yield f"{r.layer} {r.shape} {r.dtype}: forward cache / x: {cache or 'n/a'}"
    other = _ratio_against(torch)[0]
    for phase in PHASES:
        line = f"{phase:<8}{_num(r.median_ms('floor', phase), 7)}"
        for impl in _columns(torch, fast):
            line += _num(r.median_ms(impl, phase), 7) + _num(r.over_floor(impl, phase), 7, "x", 1)
        yield line + (_num(r.ratio("fast", other, phase), 9, "x") if r.has("fast") else "")


def step_table(step, cfg=None):
    cfg = TRANSFORMER if cfg is None else cfg
    title = (f"Transformer training step (forward, cross-entropy, backward, AdamW), float32: "
             f"{cfg['n_layers']} pre-norm layers (reference tier), d_model {cfg['d_model']}, "
             f"{cfg['n_heads']} heads, batch {cfg['batch']}, length {cfg['length']}, vocab "
             f"{cfg['vocab_size']}; 1t / Nt: one thread / all threads (NumPy's BLAS, torch)")
    lines = _wrap(title)
    if step.error:
        return "\n".join(lines + _wrap(f"  unavailable: {step.error}", "    "))
    for name in step.times:
        threads = name.split()[-1]
        ratio = f"  normcore {threads} / {name}: {step.ratio(threads):.2f}x" if name.startswith("torch") else ""
        lines.append(f"  {name:<12} {step.median_ms(name):8.1f} ms{ratio}")
    return "\n".join(lines)


def compute_targets(results, step, torch, fast, shape=SHAPES[0]):
    """The targets of the fast tier, read from the float32 results at ``shape``."""
    nan = math.nan
    by = {(r.layer, r.shape, r.dtype): r for r in results}
    case = lambda layer: by.get((layer, tuple(shape), "float32"))  # noqa: E731
    missing = "" if fast else "fast tier unavailable (normcore.fast is not installed)"
    targets = []
    for layer in ("LayerNorm", "BatchNorm1d"):
        r = case(layer)
        ratio = r.ratio("fast", "torch 1t", "fwd+bwd") if r and torch else nan
        targets.append(Target(f"{layer} fwd+bwd / torch 1 thread", ratio, FAST_VS_TORCH_TARGET,
                              FAST_VS_TORCH_STRETCH, missing or ("" if torch else NOT_TORCH)))
    ln, rms = case("LayerNorm"), case("RMSNorm")
    ratio = paired_ratio(rms.times["fast", "fwd+bwd"], ln.times["fast", "fwd+bwd"]) if fast and ln and rms else nan
    targets.append(Target("RMSNorm fwd+bwd / LayerNorm fwd+bwd", ratio, RMS_VS_LN_TARGET, note=missing))
    caches = [(r.cache.get("fast", nan), r) for r in results]
    caches = [(c, r) for c, r in caches if c == c]
    if caches:
        worst, r = max(caches, key=lambda cr: cr[0])
        targets.append(Target("forward cache / input bytes, largest", worst, CACHE_TARGET,
                              note=f"{r.layer} {r.shape} {r.dtype}"))
    else:
        targets.append(Target("forward cache / input bytes, largest", nan, CACHE_TARGET,
                              note=missing or "the fast tier keeps no _cache"))
    what = "Transformer step / torch, 1 thread each"
    if step.error or "torch 1t" not in step.times:
        targets.append(Target(what, nan, TRANSFORMER_TARGET, note=step.error or NOT_TORCH))
    else:
        targets.append(Target(what, step.ratio("1t"), TRANSFORMER_TARGET,
                              note=f"reference tier; all threads each: {step.ratio('Nt'):.2f}x"))
    return targets


def targets_table(targets, shape=SHAPES[0]):
    def result(ok, value):
        return "n/a" if value != value else ("met" if ok else "MISSED")

    lines = [f"targets of the fast tier (norms: float32 {tuple(shape)})",
             f"{'':<39}{'measured':>8}{'target':>9}  {'result':<7}{'stretch goal':>14}"]
    for t in targets:
        line = f"{t.what:<39}{_num(t.measured, 8, 'x')}{f'<= {t.limit:.1f}x':>9}  {result(t.met, t.measured):<7}"
        if t.stretch == t.stretch:
            line += f"{f'<= {t.stretch:.1f}x':>8} {result(t.stretch_met, t.measured)}"
        lines.append(line.rstrip())
        if t.note:
            lines += _wrap(f"    ({t.note})", "     ")
    return "\n".join(lines)
