"""Timing normcore's norms, both tiers, against PyTorch and against the memory floor, and a
Transformer training step; ``normcore bench`` prints what this module measures.

Every implementation of a case runs in the same process, interleaved round by round (one run
of each in turn, repeated, in an order that rotates from round to round: ``perf.timing``),
so that a change in the machine's load hits all of them alike. Times are medians; ratios are
medians over rounds of the ratio of two times taken in the same round. The implementations
of each norm:

* ``reference``: ``nc.LayerNorm`` and the others, the readable whole-array tier.
* ``fast``: ``normcore.fast.LayerNorm`` and the others, the cache-blocked tier (when present).
* ``torch 1t`` and ``torch Nt``: PyTorch on the CPU with one thread and with its default
  number of threads, when torch is importable. PyTorch has no DyT: for DyT these columns time
  the torch bridge's twin (``to_torch(nc.DyT(...))``), a small autograd module.
* ``floor``, the MEMORY FLOOR: the passes over the data that no implementation can avoid, as
  copies into preallocated arrays (``np.copyto``). A forward must read x and write y: a copy
  of x. A backward must read dy and write dx: a copy of dy (it also reads x or its cache, so
  this floor is a lower bound). Forward + backward: both copies. Each tier's time is also
  shown as a multiple of the floor of the same round: how far it is from the limit.

The learning run (``cases.ReverseRun``, the training the learning test checks: 4 Pre-Norm
blocks learning to reverse 8 tokens) has its training loop timed against its budget of a
minute; no test asserts on its time, since a busy machine would fail it although nothing is
wrong.

DyT (``nc.DyT``, element-wise tanh with no reduction) has no fast tier: its reference class
serves both, so it is timed once, in the reference column.

Shapes: (4096, 768) and (32, 128, 768). LayerNorm, RMSNorm and DyT act on the last axis (768);
BatchNorm1d and GroupNorm (32 groups) take axis 1 as the channels (768 channels, or 128
channels of length 768). NumPy's BLAS runs on one thread for the norms.
"""

import sys

import numpy as np

from .._array import flag
from ..i18n import translator
from ..i18n.width import pad
from ..progress import Progress
from .baselines import default_threads
from .cases import DTYPES, LEARNING, SHAPES, fast_tier, torch_module
from .printing import learning_table, machine_lines, norm_header, norm_rows, step_table, targets_table
from .runners import bench_learning, bench_shape, bench_transformer
from .targets import compute_targets
from .timing import keep_freed_memory

_ = translator("cli")

# Rounds of the norms, rounds of the Transformer step, and warm-up rounds of the norms (not
# kept): the full run, and --quick (one shape and one dtype, fewer rounds, the step on one
# thread only, no learning run;
# ``normcore bench --help`` says these numbers, and a test holds the two together).
FULL = dict(repeats=15, step_repeats=12, warmup=2)
QUICK = dict(repeats=5, step_repeats=3, warmup=1)


def run_bench(quick=False, torch="auto", fast="auto", out=print, shapes=None, dtypes=None, repeats=None,
              step_repeats=None, transformer=None, warmup=None, learning=None, progress=False):
    """Measure everything, print the tables as it goes, and return (norm results, step,
    learning run, targets); ``quick`` leaves out the step on all threads and the learning run
    (None).

    ``torch`` and ``fast`` are the modules to compare, None to leave them out, or "auto" to
    import them if they are installed. The keyword arguments after ``out`` replace the sizes
    ``quick`` picks (``QUICK`` or ``FULL``; the tests use tiny ones); the targets are read at
    the first shape. With ``progress``, each part draws normcore's progress display on stderr.
    """
    quick = flag(quick, "quick", "run_bench")
    progress = flag(progress, "progress", "run_bench")
    sizes = QUICK if quick else FULL
    torch = torch_module() if torch == "auto" else torch
    fast = fast_tier() if fast == "auto" else fast
    if torch is not None:
        default_threads(torch)
    keep_freed_memory()  # time the arithmetic, not the page faults of fresh arrays
    shapes = shapes or (SHAPES[:1] if quick else SHAPES)
    dtypes = dtypes or (DTYPES[:1] if quick else DTYPES)
    repeats = repeats or sizes["repeats"]
    step_repeats = step_repeats or sizes["step_repeats"]
    warmup = sizes["warmup"] if warmup is None else warmup

    def display(label):  # a progress display for one part, or None
        return Progress(pad(label, 26) + " ") if progress else None

    def done(bar):
        if bar is not None:
            bar.finish()

    for line in machine_lines(torch, fast, repeats, warmup):
        out(line)
    out("")
    for line in norm_header(torch, fast):
        out(line)
    results = []
    for shape in shapes:
        for dtype in dtypes:
            bar = display(_("norms {shape} {dtype}").format(shape=shape, dtype=np.dtype(dtype).name))
            rows = bench_shape(shape, dtype, repeats, torch, fast, warmup, bar)
            done(bar)
            results += rows
            for r in rows:
                for line in norm_rows(r, torch, fast):
                    out(line)
    out("")
    bar = display(_("Transformer training step"))
    step = bench_transformer(step_repeats, torch, transformer, bar, all_threads=not quick)
    done(bar)
    for line in step_table(step, transformer).splitlines() + [""]:
        out(line)
    learned = None
    if quick:  # the learning run alone trains for up to a minute
        out(_("learning run: left out by --quick (normcore bench runs it)"))
        out("")
    else:
        if progress:  # fit draws the learning run's progress display
            print(_("learning run, {steps} steps:").format(steps=(learning or LEARNING)["steps"]),
                  file=sys.stderr)
        learned = bench_learning(1, learning, progress)
        for line in learning_table(learned, learning).splitlines() + [""]:
            out(line)
    targets = compute_targets(results, step, torch, fast, shapes[0])
    for line in targets_table(targets, shapes[0]).splitlines():
        out(line)
    return results, step, learned, targets
