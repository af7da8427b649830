"""Speed: forward + backward time of LayerNorm, RMSNorm and BatchNorm across hidden sizes.

Zhang & Sennrich (2019) report that RMSNorm cuts the running time of LayerNorm by 7% to 64%
across their models: it skips the mean (no re-centring, no beta). Here each layer is timed on
an (N, H) input for H from 64 up to 4096 (the median of interleaved repeats of one forward and
one backward), and, independently of the machine's speed and load, the *number of passes over
the (N, H) data* in the normalisation's forward and backward is counted by running it on an
array that counts every full-size NumPy operation (LayerNorm: mean, centring, sum of squares,
scale; RMSNorm: sum of squares, scale; and their backward passes).

Timings depend on the machine and its load; the pass counts do not.
"""

import time

import numpy as np

from .. import BatchNorm1d, LayerNorm, RMSNorm
from .._threads import single_thread
from .._timing import keep_freed_memory
from . import _plot

NAME = "speed"
TITLE = "Forward + backward time of LayerNorm, RMSNorm and BatchNorm"
TAKEAWAY = ("RMSNorm makes 40% fewer passes over the data than LayerNorm (no mean, no centring, no beta) "
            "and here runs about a third faster, within the 7%-64% savings the RMSNorm paper reports.")

NORMS = {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "batchnorm": BatchNorm1d}
ROWS = 256


class _PassCounter(np.ndarray):
    """An ndarray that counts the NumPy operations (ufunc calls and reductions) touching at least
    ``full`` elements, i.e. one pass over the data each. Results stay counting arrays."""

    counter = None  # {"full": size, "passes": n}, set by count_passes

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [np.asarray(a) if isinstance(a, _PassCounter) else a for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(np.asarray(o) if isinstance(o, _PassCounter) else o for o in kwargs["out"])
        result = getattr(ufunc, method)(*plain, **kwargs)
        if max(np.size(a) for a in plain) >= _PassCounter.counter["full"]:
            _PassCounter.counter["passes"] += 1
        return result.view(_PassCounter) if isinstance(result, np.ndarray) else result

    def __array_function__(self, func, types, args, kwargs):
        """NumPy functions that are not ufuncs (``np.einsum``, a sum of products in one pass)
        count the same way."""
        plain = [np.asarray(a) if isinstance(a, _PassCounter) else a for a in args]
        result = func(*plain, **kwargs)
        if max((np.size(a) for a in plain if isinstance(a, np.ndarray)), default=0) >= _PassCounter.counter["full"]:
            _PassCounter.counter["passes"] += 1
        return result.view(_PassCounter) if isinstance(result, np.ndarray) else result


def count_passes(norm, x, dy):
    """How many full-size operations a norm's normalisation makes in forward + backward
    (``_normalize`` and ``_normalize_backward``, the part in which the norms differ)."""
    _PassCounter.counter = {"full": x.size, "passes": 0}
    x_hat, dx = np.empty_like(x).view(_PassCounter), np.empty_like(dy).view(_PassCounter)
    try:
        stats = norm._normalize(x.view(_PassCounter), out=x_hat)
        norm._normalize_backward(dy.view(_PassCounter), x_hat, stats, out=dx)
        return _PassCounter.counter["passes"]
    finally:
        _PassCounter.counter = None


def time_forward_backward(layers, x, dy, repeats):
    """Median seconds of one forward + backward for each layer, repeats interleaved across layers."""
    times = {name: [] for name in layers}
    for _ in range(repeats):
        for name, layer in layers.items():
            start = time.perf_counter()
            layer(x)
            layer.backward(dy)
            times[name].append(time.perf_counter() - start)
    return {name: float(np.median(t)) for name, t in times.items()}


@single_thread()
def run(quick=False, seed=0, progress=None):
    sizes, repeats = ((128, 512, 2048), 7) if quick else ((64, 128, 256, 512, 1024, 2048, 4096), 31)
    keep_freed_memory()  # time the arithmetic, not the page faults of fresh arrays
    rng = np.random.default_rng([seed, 11])
    result = {"sizes": np.array(sizes), "rows": ROWS}
    times = {name: [] for name in NORMS}
    for i, h in enumerate(sizes):
        x, dy = rng.normal(size=(ROWS, h)), rng.normal(size=(ROWS, h))
        layers = {name: cls(h) for name, cls in NORMS.items()}
        for name, t in time_forward_backward(layers, x, dy, repeats).items():
            times[name].append(t)
        if progress:
            progress(i + 1, len(sizes), f"hidden size {h}")
    for name in NORMS:
        result[f"{name}/seconds"] = np.array(times[name])
    result["rmsnorm/saving"] = 1 - result["rmsnorm/seconds"] / result["layernorm/seconds"]
    x, dy = rng.normal(size=(8, 16)), rng.normal(size=(8, 16))
    for name, cls in NORMS.items():
        result[f"{name}/passes"] = count_passes(cls(16), x, dy)
    return result


def plot(result, outdir):
    h = result["sizes"]
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            ax1.loglog(h, 1e3 * result[f"{name}/seconds"], marker="o", color=_plot.COLORS[name],
                       label=f"{_plot.LABELS[name]} ({result[f'{name}/passes']} passes over the data)")
        ax1.set(title=f"Forward + backward on ({result['rows']}, H), NumPy, 1 thread",
                xlabel="hidden size H", ylabel="milliseconds (median)")
        ax1.legend(loc="upper left")
        ax2.semilogx(h, 100 * result["rmsnorm/saving"], marker="o", color=_plot.COLORS["rmsnorm"],
                     label="RMSNorm, measured")
        passes = 100 * (1 - result["rmsnorm/passes"] / result["layernorm/passes"])
        ax2.axhline(passes, color="k", ls="--", lw=2, label=f"fewer passes over the data ({passes:.0f}%)")
        ax2.axhspan(7, 64, color=_plot.COLORS["rmsnorm"], alpha=0.12, label="RMSNorm paper: 7% to 64%")
        ax2.set(title="Time saved by RMSNorm over LayerNorm", xlabel="hidden size H", ylabel="saving (%)",
                ylim=(min(-10, 100 * result["rmsnorm/saving"].min() - 5), 80))
        ax2.legend(loc="lower right")
        for ax in (ax1, ax2):
            ax.set_xticks(h, [str(v) for v in h])
            ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
        fig.suptitle("LayerNorm vs RMSNorm vs BatchNorm: time per forward + backward")
        return [_plot.save(fig, outdir, "speed")]
