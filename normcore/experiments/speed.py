"""Speed: forward + backward time of LayerNorm, RMSNorm and BatchNorm across hidden sizes.

Zhang & Sennrich (2019) report that RMSNorm cuts the running time by 7% to 64% across their
models: it skips the mean (no re-centring, no beta). Here each layer of the reference tier
(``nc.LayerNorm``, ``nc.RMSNorm``, ``nc.BatchNorm1d``) is timed on an (N, H) input for H from
64 up to 4096 (interleaved rounds of one forward and one backward, ``normcore.perf.timing``:
each layer's median time, and RMSNorm's saving as one minus ``paired_ratio``, the median over
rounds of RMSNorm's time over LayerNorm's in the same round, steadier on a busy machine), and,
independently of the machine's speed and load, the *number of passes over the (N, H) data*
that its forward and its backward make is counted: the layer runs on a ``PassCounter``, an
array that counts every NumPy operation reading a whole (N, H) array (an elementwise
operation, or a sum over it), through the layer's public ``forward`` and ``backward`` only.

Counted in float64, where no pass is a dtype cast. LayerNorm makes more passes than RMSNorm
because of the mean: forward, the sum for the mean, centring x (twice: once for the variance,
once for x_hat) and adding beta; backward, dbeta, the mean of dx_hat and its subtraction.
BatchNorm makes LayerNorm's passes over other axes. Timings depend on the machine and its load;
the pass counts do not.

What the numbers show and do not show. NumPy runs every operation as its own pass over memory,
so one layer's time here follows its pass count: this measures what dropping the mean saves in
an unfused implementation of the layer alone. It is not comparable with the paper's 7% to 64%,
which is the training time of whole models (the norm is one part of a step: see the
``rmsnorm_vs_layernorm`` experiment, where a 30% faster norm makes a step a few percent
faster). Nor does it predict a fused kernel: one that reads x once and writes y once does so
for either norm, both are then bound by memory bandwidth, and the arithmetic RMSNorm skips
costs little (normcore, NumPy only, has no such kernel to time).
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, LayerNorm, RMSNorm
from ..perf.threads import single_thread
from ..perf.timing import LayerRunner, keep_freed_memory, median, paired_ratio, time_interleaved
from . import _plot

NAME = "speed"
TITLE = N_("Forward + backward time of LayerNorm, RMSNorm and BatchNorm")  # shown as _(TITLE)
TAKEAWAY = ("RMSNorm makes 37% fewer passes over the data than LayerNorm (12 against 19: no mean, no "
            "centring, no beta), and one NumPy layer, where each operation is a pass over memory, takes "
            "34% to 37% less time across hidden sizes. That is one unfused layer's time, not the 7%-64% the "
            "RMSNorm paper reports for training whole models; a fused kernel reads x and writes y once for "
            "either norm, so both would be bound by memory bandwidth and differ far less (not measured "
            "here). The times move with the machine's load; the pass counts do not.")

NORMS = {"layernorm": LayerNorm, "rmsnorm": RMSNorm, "batchnorm": BatchNorm1d}
ROWS = 256


class PassCounter(np.ndarray):
    """An ndarray that counts the NumPy operations that read at least ``full`` values, i.e. one
    pass over the data each (ufunc calls, reductions such as ``sum``, and functions such as
    ``np.einsum``). Results are PassCounters too, so the count follows the data through a
    layer's forward and its backward. ``instrument = True`` lets it through the layers' input
    checks unchanged (``normcore._array.is_instrument``)."""

    instrument = True
    counter = None  # {"full": size, "passes": n} while count_passes counts; None: no counting

    @staticmethod
    def _count(arrays):
        if PassCounter.counter is None:
            return
        sizes = [np.size(a) for a in arrays if isinstance(a, np.ndarray)]
        if max(sizes, default=0) >= PassCounter.counter["full"]:
            PassCounter.counter["passes"] += 1

    @staticmethod
    def _plain(a):
        return a.view(np.ndarray) if isinstance(a, PassCounter) else a

    @staticmethod
    def _counting(result):
        return result.view(PassCounter) if isinstance(result, np.ndarray) else result

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = [self._plain(a) for a in inputs]
        if "out" in kwargs:
            kwargs["out"] = tuple(self._plain(o) for o in kwargs["out"])
        self._count(inputs)
        return self._counting(getattr(ufunc, method)(*inputs, **kwargs))

    def __array_function__(self, func, types, args, kwargs):
        args = [self._plain(a) for a in args]
        self._count(args)
        return self._counting(func(*args, **kwargs))


def count_passes(norm, x, dy):
    """(forward passes, backward passes) the layer ``norm`` makes over data of x's size, through
    its public ``forward(x)`` and ``backward(dy)``; parameter gradients included."""
    counts = []
    PassCounter.counter = {"full": x.size, "passes": 0}
    try:
        norm.forward(x.view(PassCounter))
        counts.append(PassCounter.counter["passes"])
        norm.backward(dy.view(PassCounter))
        counts.append(PassCounter.counter["passes"] - counts[0])
    finally:
        PassCounter.counter = None
    return tuple(counts)


def time_forward_backward(layers, x, dy, repeats):
    """Seconds of one forward + backward of each layer in each of the interleaved rounds."""
    runners = {name: LayerRunner(layer, x, dy) for name, layer in layers.items()}
    times = time_interleaved(runners, ("fwd+bwd",), repeats, warmup=1)
    return {name: times[name, "fwd+bwd"] for name in layers}


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.speed.run")
    sizes, repeats = ((128, 512, 2048), 7) if quick else ((64, 128, 256, 512, 1024, 2048, 4096), 31)
    keep_freed_memory()  # time the arithmetic, not the page faults of fresh arrays
    rng = np.random.default_rng([seed, 11])
    result = {"sizes": np.array(sizes), "rows": ROWS}
    times, saving = {name: [] for name in NORMS}, []
    for i, h in enumerate(sizes):
        x, dy = rng.normal(size=(ROWS, h)), rng.normal(size=(ROWS, h))
        layers = {name: cls(h) for name, cls in NORMS.items()}
        rounds = time_forward_backward(layers, x, dy, repeats)
        for name in NORMS:
            times[name].append(median(rounds[name]))
        saving.append(1 - paired_ratio(rounds["rmsnorm"], rounds["layernorm"]))  # steadier under load
        if progress:
            progress(i + 1, len(sizes), f"hidden size {h}")
    for name in NORMS:
        result[f"{name}/seconds"] = np.array(times[name])
    result["rmsnorm/saving"] = np.array(saving)
    x, dy = rng.normal(size=(8, 16)), rng.normal(size=(8, 16))
    for name, cls in NORMS.items():
        forward, backward = count_passes(cls(16), x, dy)
        result[f"{name}/passes/forward"], result[f"{name}/passes/backward"] = forward, backward
        result[f"{name}/passes"] = forward + backward
    return result


def plot(result, outdir):
    h = result["sizes"]
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            ax1.loglog(h, 1e3 * result[f"{name}/seconds"], **_plot.series(name),
                       label=f"{_plot.LABELS[name]} ({result[f'{name}/passes']} passes over the data: "
                             f"{result[f'{name}/passes/forward']} forward, "
                             f"{result[f'{name}/passes/backward']} backward)")
        ax1.set(title=f"Forward + backward on ({result['rows']}, H), reference tier, 1 thread",
                xlabel="hidden size H", ylabel="milliseconds (median)")
        ax1.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=13)  # below: covers no data
        ax2.semilogx(h, 100 * result["rmsnorm/saving"], **_plot.series("rmsnorm"),
                     label="RMSNorm, measured")
        passes = 100 * (1 - result["rmsnorm/passes"] / result["layernorm/passes"])
        ax2.axhline(passes, color="k", ls=":", lw=2.5, label=f"fewer passes over the data ({passes:.0f}%)")
        ax2.set(title="Time one RMSNorm layer saves over LayerNorm", xlabel="hidden size H",
                ylabel="saving (%, median over rounds)",
                ylim=(min(0, 100 * result["rmsnorm/saving"].min() - 5), 60))
        ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=13)  # below: covers no data
        for ax in (ax1, ax2):
            ax.set_xticks(h, [str(v) for v in h])
            ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
        fig.suptitle("LayerNorm vs RMSNorm vs BatchNorm: time per forward + backward")
        return [_plot.save(fig, outdir, "speed")]
