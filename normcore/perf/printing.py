"""The benchmark's printed tables: the machine, the norms (times, multiples of the floor,
ratios), the training step, the learning run and the targets, every line within 80 columns.
"""

import os
import textwrap

import numpy as np

from .baselines import NOT_TORCH, default_threads
from .cases import LEARNING, LEARNING_BUDGET, ONE_TIER, PHASES, SHAPES, TRANSFORMER

WIDTH = 80  # every line printed fits in 80 columns


def wrap(text, indent=""):
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
    tv = f"torch {torch.__version__} ({default_threads(torch)} default threads)" if torch else NOT_TORCH
    fv = "normcore.fast" if fast else "fast tier unavailable (normcore.fast is not installed)"
    lines = wrap(f"machine: {model}, {os.cpu_count()} logical cores, load average {load}", "  ")
    lines += wrap(f"numpy {np.__version__}, its BLAS on 1 thread for the norms; {tv}; {fv}", "  ")
    rounds = "round" if warmup == 1 else "rounds"
    lines += wrap(f"times: median ms of {repeats} interleaved rounds (after {warmup} warm-up {rounds}). "
                   "floor: the memory floor measured in the same rounds, the passes over the data no "
                   "implementation can avoid, as np.copyto: forward = a copy of x (read x, write y), "
                   "backward = a copy of dy (read dy, write dx), fwd+bwd = both. xF: a time as a "
                   "multiple of the floor; fast/1t (fast/ref without torch): the fast tier's time over "
                   "torch's on one thread (over the reference tier's); both are medians over rounds of "
                   "the ratio of two times of the same round.")
    twin = (" torch has no DyT: its torch columns time the torch bridge's twin "
            "(to_torch(nc.DyT(...)), a small autograd module)." if torch else "")
    lines += wrap("DyT has no fast tier (nc.DyT serves both tiers): it is timed once, in the "
                  "reference column, with no fast/ratio column." + twin)
    return lines

def columns(torch, fast):
    return ["reference"] + (["fast"] if fast else []) + (["torch 1t", "torch Nt"] if torch else [])

def ratio_against(torch):
    """(the implementation the fast tier is compared with in the tables, the column's name)."""
    return ("torch 1t", "fast/1t") if torch else ("reference", "fast/ref")

def num(value, width, suffix="", decimals=2):
    """``value`` right-aligned in ``width`` columns (suffix included), with as many decimals as
    fit, at most ``decimals``; "n/a" for NaN."""
    if value != value:
        return f"{'n/a':>{width}}"
    for places in range(decimals, -1, -1):
        text = f"{value:.{places}f}{suffix}"
        if len(text) <= width - 1:  # keep a space before it
            break
    return f"{text:>{width}}"

def norm_header(torch, fast):
    cols = columns(torch, fast)
    first = f"{'':<8}{'floor':>7}" + "".join(f"{c:>14}" for c in cols)
    first += f"{ratio_against(torch)[1]:>9}" if fast else ""
    second = f"{'phase':<8}{'ms':>7}" + "".join(f"{'ms':>7}{'xF':>7}" for _ in cols)
    return [first, second, "-" * len(first)]

def norm_rows(r, torch, fast):
    """A title line for the case (with the forward caches), then one line per phase."""
    cache = ", ".join(f"{tier} {num(c, 8, 'x').strip()}" for tier, c in r.cache.items())
    one_tier = " (one tier)" if r.layer in ONE_TIER else ""
    yield f"{r.layer}{one_tier} {r.shape} {r.dtype}: forward cache / x: {cache or 'n/a'}"
    other = ratio_against(torch)[0]
    for phase in PHASES:
        line = f"{phase:<8}{num(r.median_ms('floor', phase), 7)}"
        for impl in columns(torch, fast):
            line += num(r.median_ms(impl, phase), 7) + num(r.over_floor(impl, phase), 7, "x", 1)
        yield line + (num(r.ratio("fast", other, phase), 9, "x") if r.has("fast") else "")

def step_table(step, cfg=None):
    cfg = TRANSFORMER if cfg is None else cfg
    title = (f"Transformer training step (forward, cross-entropy, backward, AdamW), float32: "
             f"{cfg['n_layers']} pre-norm layers (reference tier), d_model {cfg['d_model']}, "
             f"{cfg['n_heads']} heads, batch {cfg['batch']}, length {cfg['length']}, vocab "
             f"{cfg['vocab_size']}; 1t / Nt: one thread / all threads (NumPy's BLAS, torch)")
    lines = wrap(title)
    if step.error:
        return "\n".join(lines + wrap(f"  unavailable: {step.error}", "    "))
    for name in step.times:
        threads = name.split()[-1]
        ratio = (f"  normcore {threads} / {name}: {step.ratio(threads):.2f}x"
                 if name.startswith("torch") else "")
        lines.append(f"  {name:<12} {step.median_ms(name):8.1f} ms{ratio}")
    return "\n".join(lines)

def learning_table(learning, cfg=None):
    """The learning run's time against its budget, and what the model learned."""
    cfg = LEARNING if cfg is None else cfg
    title = (f"Learning run (the learning test's training loop), float64: {cfg['n_layers']} "
             f"pre-norm layers, d_model {cfg['d_model']}, {cfg['n_heads']} heads, reversing "
             f"{cfg['n_tokens']} tokens, {cfg['steps']} AdamW steps of batch {cfg['batch_size']}; "
             f"NumPy's BLAS on 1 thread")
    lines = wrap(title)
    if learning.error:
        return "\n".join(lines + wrap(f"  unavailable: {learning.error}", "    "))
    seconds = learning.median_seconds()
    result = "met" if seconds <= LEARNING_BUDGET else "MISSED"
    rounds = len(learning.seconds)
    lines.append(f"  {cfg['steps']} steps in {seconds:.1f} s (median of {rounds} run{'s' * (rounds != 1)}); "
                 f"budget {LEARNING_BUDGET:.0f} s: {result}")
    lines.append(f"  held-out token accuracy {learning.accuracy:.4f}")
    return "\n".join(lines)

def targets_table(targets, shape=SHAPES[0]):
    def result(ok, value):
        return "n/a" if value != value else ("met" if ok else "MISSED")

    lines = [f"targets of the fast tier (norms: float32 {tuple(shape)})",
             f"{'':<39}{'measured':>8}{'target':>9}  {'result':<7}{'stretch goal':>14}"]
    for t in targets:
        line = (f"{t.what:<39}{num(t.measured, 8, 'x')}{f'<= {t.limit:.1f}x':>9}  "
                f"{result(t.met, t.measured):<7}")
        if t.stretch == t.stretch:
            line += f"{f'<= {t.stretch:.1f}x':>8} {result(t.stretch_met, t.measured)}"
        lines.append(line.rstrip())
        if t.note:
            lines += wrap(f"    ({t.note})", "     ")
    return "\n".join(lines)
