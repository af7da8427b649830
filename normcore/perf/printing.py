"""The benchmark's printed tables: the machine, the norms (times, multiples of the floor,
ratios), the training step, the learning run and the targets, every line within 80 columns.
"""

import os

import numpy as np

from ..i18n import N_, joined, translator
from ..i18n import width
from ..i18n.width import pad
from .baselines import NO_FAST, NOT_TORCH, default_threads
from .cases import LEARNING, LEARNING_BUDGET, ONE_TIER, PHASES, SHAPES, TRANSFORMER

_ = translator("cli")
WIDTH = 80  # every line printed fits in 80 display columns
# the names of the tables' columns and of the tiers, as the tables print them: _(name)
NAMES = {"reference": N_("reference"), "fast": N_("fast"), "fast/1t": N_("fast/1t"),
         "fast/ref": N_("fast/ref")}


def named(key):
    """A column's or tier's name in the language in use ("torch 1t" stays as it is)."""
    return _(NAMES[key]) if key in NAMES else key


def wrap(text, indent=""):
    """``text`` in lines of at most WIDTH display columns, its own leading spaces kept on the
    first line, ``indent`` before the others."""
    lead = text[:len(text) - len(text.lstrip())]
    return width.wrap(text, WIDTH, indent=lead, subsequent_indent=indent)

def machine_lines(torch, fast, repeats, warmup):
    """What ran where, and how to read the tables, wrapped to WIDTH columns."""
    model = _("unknown CPU")
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"
    tv = (_("torch {version} ({threads} default threads)").format(
        version=torch.__version__, threads=default_threads(torch)) if torch else _(NOT_TORCH))
    fv = "normcore.fast" if fast else _(NO_FAST)
    lines = wrap(_("machine: {model}, {cores} logical cores, load average {load}").format(
        model=model, cores=os.cpu_count(), load=load), "  ")
    lines += wrap(_("numpy {version}, its BLAS on {n} thread for the norms; {torch}; {fast}").format(
        version=np.__version__, n=1, torch=tv, fast=fv), "  ")
    lines += wrap(_.ngettext(
        "times: median ms of {repeats} interleaved rounds (after {warmup} warm-up round). ",
        "times: median ms of {repeats} interleaved rounds (after {warmup} warm-up rounds). ",
        warmup).format(repeats=repeats, warmup=warmup)
        + _("floor: the memory floor measured in the same rounds, the passes over the data no "
            "implementation can avoid, as np.copyto: forward = a copy of x (read x, write y), "
            "backward = a copy of dy (read dy, write dx), fwd+bwd = both. xF: a time as a "
            "multiple of the floor; fast/1t (fast/ref without torch): the fast tier's time over "
            "torch's on one thread (over the reference tier's); both are medians over rounds of "
            "the ratio of two times of the same round."))
    twin = (_("torch has no DyT: its torch columns time the torch bridge's twin "
              "(to_torch(nc.DyT(...)), a small autograd module).") if torch else "")
    lines += wrap(joined(_("DyT has no fast tier (nc.DyT serves both tiers): it is timed once, "
                              "in the reference column, with no fast/ratio column."), twin))
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
        return pad(_("n/a"), width, ">")
    for places in range(decimals, -1, -1):
        text = f"{value:.{places}f}{suffix}"
        if len(text) <= width - 1:  # keep a space before it
            break
    return f"{text:>{width}}"

def norm_header(torch, fast):
    cols = columns(torch, fast)
    first = " " * 8 + width.pad(_("floor"), 7, ">") + "".join(width.pad(named(c), 14, ">") for c in cols)
    first += " " + width.pad(named(ratio_against(torch)[1]), 8, ">") if fast else ""
    second = width.pad(_("phase"), 8) + f"{'ms':>7}" + "".join(f"{'ms':>7}{'xF':>7}" for _col in cols)
    return [first, second, "-" * width.display_width(first)]

def norm_rows(r, torch, fast):
    """A title line for the case (with the forward caches), then one line per phase."""
    cache = _(", ").join(f"{named(tier)} {num(c, 8, 'x').strip()}" for tier, c in r.cache.items())
    layer = _("{layer} (one tier)").format(layer=r.layer) if r.layer in ONE_TIER else r.layer
    yield _("{layer} {shape} {dtype}: forward cache / x: {cache}").format(
        layer=layer, shape=r.shape, dtype=r.dtype, cache=cache or _("n/a"))
    other = ratio_against(torch)[0]
    for phase in PHASES:
        line = width.pad(_(phase), 8) + num(r.median_ms("floor", phase), 7)
        for impl in columns(torch, fast):
            line += num(r.median_ms(impl, phase), 7) + num(r.over_floor(impl, phase), 7, "x", 1)
        yield line + (num(r.ratio("fast", other, phase), 9, "x") if r.has("fast") else "")

def step_table(step, cfg=None):
    cfg = TRANSFORMER if cfg is None else cfg
    title = _("Transformer training step (forward, cross-entropy, backward, AdamW), float32: "
              "{n_layers} pre-norm layers (reference tier), d_model {d_model}, {n_heads} heads, "
              "batch {batch}, length {length}, vocab {vocab_size}; 1t / Nt: one thread / all "
              "threads (NumPy's BLAS, torch)").format(**cfg)
    lines = wrap(title)
    if step.error:
        return "\n".join(lines + wrap("  " + _("unavailable: {error}").format(error=step.error), "    "))
    for name in step.times:
        threads = name.split()[-1]
        ratio = (f"  normcore {threads} / {name}: {step.ratio(threads):.2f}x"
                 if name.startswith("torch") else "")
        lines.append(f"  {name:<12} {step.median_ms(name):8.1f} ms{ratio}")
    return "\n".join(lines)

def learning_table(learning, cfg=None):
    """The learning run's time against its budget, and what the model learned."""
    cfg = LEARNING if cfg is None else cfg
    title = _("Learning run (the learning test's training loop), float64: {n_layers} pre-norm "
              "layers, d_model {d_model}, {n_heads} heads, reversing {n_tokens} tokens, {steps} "
              "AdamW steps of batch {batch_size}; NumPy's BLAS on {n} thread").format(n=1, **cfg)
    lines = wrap(title)
    if learning.error:
        return "\n".join(lines + wrap("  " + _("unavailable: {error}").format(error=learning.error), "    "))
    seconds = learning.median_seconds()
    result = _("met") if seconds <= LEARNING_BUDGET else _("MISSED")
    rounds = len(learning.seconds)
    lines.append("  " + _.ngettext(
        "{steps} steps in {seconds} s (median of {rounds} run); budget {budget} s: {result}",
        "{steps} steps in {seconds} s (median of {rounds} runs); budget {budget} s: {result}",
        rounds).format(steps=cfg["steps"], seconds=f"{seconds:.1f}", rounds=rounds,
                       budget=f"{LEARNING_BUDGET:.0f}", result=result))
    lines.append("  " + _("held-out token accuracy {accuracy}").format(accuracy=f"{learning.accuracy:.4f}"))
    return "\n".join(lines)

def targets_table(targets, shape=SHAPES[0]):
    def result(ok, value):
        return _("n/a") if value != value else (_("met") if ok else _("MISSED"))

    heads = [_("measured"), _("target"), _("result"), _("stretch goal")]
    lines = [_("targets of the fast tier (norms: float32 {shape})").format(shape=tuple(shape)),
             f"{'':<39}{width.pad(heads[0], 8, '>')}{width.pad(heads[1], 9, '>')}  "
             f"{width.pad(heads[2], 7)}{width.pad(heads[3], 14, '>')}"]
    for t in targets:
        line = (f"{width.pad(t.what, 39)}{num(t.measured, 8, 'x')}{f'<= {t.limit:.1f}x':>9}  "
                f"{width.pad(result(t.met, t.measured), 7)}")
        if t.stretch == t.stretch:
            line += f"{f'<= {t.stretch:.1f}x':>8} {result(t.stretch_met, t.measured)}"
        lines.append(line.rstrip())
        if t.note:
            lines += wrap(f"    ({t.note})", "     ")
    return "\n".join(lines)
