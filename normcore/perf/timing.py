"""The one timing loop of normcore: ``normcore bench`` and the speed experiment both use it.

Every implementation being compared runs in the same process, interleaved: one run of each in
turn, repeated for several rounds (in an order that rotates from round to round), so that a
change in the machine's load hits all of them alike. Results are the seconds of every round;
compare medians, or better the median over rounds of the ratio of two implementations' times
in the same round (``paired_ratio``), which stays steady on a busy machine.

A *runner* is any object with ``forward()`` and ``backward()`` (or ``step()``) and a
``context()`` that returns the context manager each timed call runs in (thread counts, say).
``phase`` says what one timed call is::

    "forward"   forward()
    "backward"  backward(), after an untimed forward() (it needs the forward's cache)
    "fwd+bwd"   forward() then backward()
    "step"      step(), e.g. one training step
"""

import contextlib
import ctypes
import statistics

from ..i18n import translator
from ..progress import Stopwatch

_ = translator("cli")

CALLS = {"forward": ("forward",), "backward": ("backward",), "fwd+bwd": ("forward", "backward"),
         "step": ("step",)}


class LayerRunner:
    """Runs a NumPy layer (``forward(x)``, ``backward(dy)``) on a fixed input and gradient."""

    def __init__(self, layer, x, dy):
        self.layer, self.x, self.dy = layer, x, dy

    def context(self):
        return contextlib.nullcontext()

    def forward(self):
        self.layer.forward(self.x)

    def backward(self):
        self.layer.backward(self.dy)


def time_once(runner, phase):
    """Seconds one ``phase`` of ``runner`` takes."""
    with runner.context():
        if phase == "backward":
            runner.forward()
        calls = [getattr(runner, name) for name in CALLS[phase]]
        watch = Stopwatch()
        for call in calls:
            call()
        return watch.elapsed()


def time_interleaved(runners, phases, repeats, warmup=2, progress=None):
    """{(name, phase): [seconds of each round]} for the runners {name: runner}: in every round,
    each phase of each runner once, in turn. The first ``warmup`` rounds are not kept.
    ``progress``, if given, is called as ``progress(done, total, label)`` after each round.

    The order of the runners rotates by one from round to round, so that no runner always
    follows the same one: what a run leaves behind (PyTorch's idle threads still spinning, the
    CPU cache full of its arrays) falls on every runner in turn."""
    times = {(name, phase): [] for name in runners for phase in phases}
    names = list(runners)
    for round_ in range(warmup + repeats):
        shift = round_ % len(names) if names else 0
        order = names[shift:] + names[:shift]
        for phase in phases:
            for name in order:
                seconds = time_once(runners[name], phase)
                if round_ >= warmup:
                    times[name, phase].append(seconds)
        if progress is not None:
            label = (_("warm-up") if round_ < warmup else
                     _("round {done}/{total}").format(done=round_ + 1 - warmup, total=repeats))
            progress(round_ + 1, warmup + repeats, label)
    return times


def median(seconds):
    return statistics.median(seconds)


def paired_ratio(a, b):
    """The median over rounds of a[i] / b[i]: the two runs of one round saw the same machine
    load, so their ratio is steadier than the ratio of the two medians on a busy machine."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


def keep_freed_memory():
    """Ask glibc to keep freed memory for reuse instead of handing it back to the OS.

    A timing loop allocates and frees arrays of megabytes. By default glibc may return such
    blocks to the OS, so every new array page-faults again; that can cost more than the
    arithmetic, and which implementation pays for it depends on the order of allocations. This
    setting is process-wide and stays; without glibc it does nothing.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_mmap_threshold = -1, -3  # mallopt's parameter numbers
    libc.mallopt(m_mmap_threshold, 1 << 25)  # arrays up to 32 MiB come from the reusable heap
    libc.mallopt(m_trim_threshold, 1 << 30)  # and the heap is not trimmed back to the OS
