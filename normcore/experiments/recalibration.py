"""Recalibrating BatchNorm's running statistics, and folding BatchNorm into the Linear before it.

Finding: early in training the running statistics are off: they still remember their start
(mean 0, variance 1) and trail weights that move fast at a high learning rate. With the default
momentum 0.1 recalibrated statistics (``recalibrate_batchnorm``: the exact statistics of 1024
training samples under the current weights) lower the test loss by about 0.1 nats over the
first ~70 steps, and by 0 to 0.03 afterwards (better at 78% of the seed-checkpoint pairs, not
all); the running mean then sits ~3% of a standard deviation from the recalibrated one, which
is no more than the sampling noise of the two estimates (~4%): no lag is visible any more.
With momentum 0.01 (the 0.99 of frameworks that count the other way) the running statistics
need hundreds of steps to catch up: the test loss is up to 1.4 nats worse than recalibrated
until ~300 steps, 0.03 worse at 800, and the running mean stays further from the recalibrated
one than sampling noise explains (a lag). Evaluating with each test batch's own statistics
(batches of 32, as in training) is worse than recalibrated statistics at every checkpoint.

Configuration (chosen by trying a few learning rates, optimizers and depths, not a systematic
sweep): the teacher task of ``_nn.teacher_task`` (20 inputs, 10 classes), an MLP 20-64-64-64-64-10
with Linear -> BatchNorm1d -> ReLU blocks, plain SGD at a constant learning rate of 2 (high:
with BatchNorm the weights' scale does not matter to the output, so large steps train), batches
of 32. The same model is trained twice from the same seed with BatchNorm momentum 0.1 and 0.01;
momentum changes only the running statistics, never the training (which uses batch statistics),
so the two runs have identical weights. At log-spaced checkpoints the test loss (1024 held-out
samples) is measured three ways: with the running statistics, with statistics recalibrated on
32 training batches (1024 samples), and with each test batch's own statistics (batches of 32).
The running statistics' error is measured against the recalibrated ones, as the mean over
channels and layers of |running_mean - mean| / std and |log(running_var / var)|; its sampling
floor is what two unbiased Gaussian estimates would differ by, sqrt(2/pi) * sqrt(m / ((2 - m) *
32) + 1/1024) standard deviations (an exponential average with momentum m weighs m / (2 - m) of
a batch's variance). Median and range over 5 seeds (full run; 1 in the quick run).

Folding (``fold_batchnorm``): the forward time of Linear(C, C) -> BatchNorm1d(C) in evaluation
(reference and fast tier) against the folded Linear, batches of 256, one thread, timed by
``normcore.perf.timing`` (interleaved rounds, median over rounds); the folded output equals the
pair's to rounding.

What not to conclude: that recalibration matters little once training has run long enough. This
is a stationary task trained at a constant learning rate with the default momentum; it matters
where the running statistics have no chance to follow the weights: after averaging weights
(SWA), after a few fine-tuning steps on shifted data, with momentum 0.01, or early in training.
Nor that folding saves a fixed fraction: it saves one pass over the Linear's output, which the
matrix product dwarfs as the width grows (about 40% of the pair's time at C = 64, 20% at 256,
5% at 1024 in the committed figure), and the timings come from a shared machine.
"""

import copy

import numpy as np

from .. import fast
from .._array import flag
from ..i18n import N_
from ..module import Sequential
from ..nn import CrossEntropyLoss, Linear, fold_batchnorm, recalibrate_batchnorm
from ..nn.batchnorm_in_practice import batchnorms
from ..norms import BatchNorm1d
from ..perf.threads import single_thread
from ..perf.timing import LayerRunner, keep_freed_memory, median, paired_ratio, time_interleaved
from . import _nn, _plot

NAME = "recalibration"
TITLE = N_("BatchNorm after training: recalibrated running statistics, and folding into the Linear")
TAKEAWAY = ("Recalibrated running statistics lower the test loss by ~0.1 nats early in training and 0-0.03 "
            "later with momentum 0.1, where the running mean ends within sampling noise; with momentum 0.01 the "
            "running statistics lag for hundreds of steps (up to 1.4 nats worse). Folding BatchNorm into the "
            "Linear changes no output and removes its inference cost.")

WIDTH, DEPTH, LR, BATCH = 64, 4, 2.0, 32
MOMENTA = (0.1, 0.01)
CALIBRATION_BATCHES, TEST_SIZE = 32, 1024
MODES = ("running 0.1", "running 0.01", "recalibrated", "batch")
LABELS = {"running 0.1": "running statistics, momentum 0.1", "running 0.01": "running statistics, momentum 0.01",
          "recalibrated": "recalibrated statistics", "batch": "each test batch's statistics (32)"}
COLORS = {"running 0.1": _plot.OKABE_ITO["blue"], "running 0.01": _plot.OKABE_ITO["vermillion"],
          "recalibrated": _plot.OKABE_ITO["green"], "batch": _plot.OKABE_ITO["grey"]}
MARKERS = {"running 0.1": "o", "running 0.01": "X", "recalibrated": "^", "batch": "s"}
LINESTYLES = {"running 0.1": "-", "running 0.01": "--", "recalibrated": "-.", "batch": ":"}
# the running statistics' errors: mean and variance, for each momentum
ERRORS = {f"{stat} {m}": f"{'mean' if stat == 'mean' else 'variance'}, momentum {m}"
          for stat in ("mean", "var") for m in MOMENTA}
ERROR_COLORS = dict(zip(ERRORS, (COLORS["running 0.1"], COLORS["running 0.01"], _plot.OKABE_ITO["sky_blue"],
                                 _plot.OKABE_ITO["orange"])))
ERROR_MARKERS = dict(zip(ERRORS, ("o", "X", "D", "v")))
ERROR_LINESTYLES = dict(zip(ERRORS, ("-", "--", (0, (6, 2, 1, 2)), (0, (1, 1)))))


def model(momentum, seed):
    return _nn.mlp([20] + [WIDTH] * DEPTH + [10], "relu", norm=lambda c: BatchNorm1d(c, momentum=momentum),
                   rng=seed)


def test_loss(net, x, labels, batch_statistics=False):
    """Mean cross entropy of ``net`` in evaluation mode on (x, labels), in batches of BATCH; with
    ``batch_statistics`` every BatchNorm uses each batch's own statistics (a copy is changed)."""
    net = copy.deepcopy(net).eval()
    if batch_statistics:
        for bn in batchnorms(net):
            bn.track_running_stats = False
    loss = CrossEntropyLoss()
    total = sum(loss(net(x[i:i + BATCH]), labels[i:i + BATCH]) * len(x[i:i + BATCH]) for i in range(0, len(x), BATCH))
    return total / len(x)


def stats_error(net, reference):
    """(|running_mean - mean| / std, |log(running_var / var)|), averaged over channels and
    layers, of ``net``'s running statistics against ``reference``'s."""
    pairs = list(zip(batchnorms(net), batchnorms(reference)))
    mean = np.mean([np.abs(a.running_mean - b.running_mean) / np.sqrt(b.running_var) for a, b in pairs])
    var = np.mean([np.abs(np.log(a.running_var / b.running_var)) for a, b in pairs])
    return mean, var


@single_thread()
def train(steps, checkpoints, seed):
    """Train the model with each momentum from ``seed``; at each checkpoint measure the test loss
    of each mode and the running statistics' error. Returns {name: array over checkpoints}."""
    rng = np.random.default_rng([seed, 20])
    x_train, y_train = _nn.teacher_task(20_000, rng=rng)
    x_test, y_test = _nn.teacher_task(TEST_SIZE, rng=rng)
    calibration = [x_train[i * BATCH:(i + 1) * BATCH] for i in range(CALIBRATION_BATCHES)]
    nets = {m: model(m, seed) for m in MOMENTA}
    optimizers = {m: _nn.sgd(net, LR) for m, net in nets.items()}
    out = {k: [] for k in ("loss/" + m for m in MODES)}
    out.update({f"{stat}_error/{m}": [] for stat in ("mean", "var") for m in MOMENTA})
    for step in range(1, steps + 1):
        idx = rng.integers(0, len(x_train), BATCH)
        for m, net in nets.items():
            _nn.train_step(net.train(), optimizers[m], x_train[idx], y_train[idx])
        if step in checkpoints:
            recalibrated = recalibrate_batchnorm(copy.deepcopy(nets[0.1]), calibration)
            for m, net in nets.items():
                out[f"loss/running {m}"].append(test_loss(net, x_test, y_test))
                mean_error, var_error = stats_error(net, recalibrated)
                out[f"mean_error/{m}"].append(mean_error)
                out[f"var_error/{m}"].append(var_error)
            out["loss/recalibrated"].append(test_loss(recalibrated, x_test, y_test))
            out["loss/batch"].append(test_loss(nets[0.1], x_test, y_test, batch_statistics=True))
    same = all(np.array_equal(p.data, q.data) for p, q in zip(nets[0.1].parameters(), nets[0.01].parameters()))
    return {k: np.array(v) for k, v in out.items()} | {"same_weights": same}


class _Forward:
    """A timing runner: ``step()`` is one forward of ``layer`` in evaluation mode."""

    def __init__(self, layer, x):
        self.runner = LayerRunner(layer.eval(), x, None)
        self.context = self.runner.context

    def step(self):
        self.runner.forward()


@single_thread()
def fold_timing(widths, repeats, rows=256, seed=0):
    """Seconds per forward of Linear -> BatchNorm1d (eval; reference and fast tier) and of the
    folded Linear, for each width; the folded time over each pair's (median of per-round ratios)."""
    keep_freed_memory()
    rng = np.random.default_rng([seed, 21])
    result = {k: [] for k in ("pair", "pair_fast", "folded", "ratio", "ratio_fast", "max_abs_diff")}
    for c in widths:
        linear, bn, bn_fast = Linear(c, c, init="torch", rng=rng), BatchNorm1d(c), fast.BatchNorm1d(c)
        bn.running_mean[...], bn.running_var[...] = rng.normal(size=c), rng.uniform(0.5, 2, c)
        bn_fast.load_state_dict(bn.state_dict())
        x = rng.normal(size=(rows, c))
        nets = {"pair": Sequential(linear, bn), "pair_fast": Sequential(copy.deepcopy(linear), bn_fast),
                "folded": fold_batchnorm(linear, bn.eval())}
        times = time_interleaved({k: _Forward(net, x) for k, net in nets.items()}, ["step"], repeats)
        for k in nets:
            result[k].append(median(times[k, "step"]))
        result["ratio"].append(paired_ratio(times["folded", "step"], times["pair", "step"]))
        result["ratio_fast"].append(paired_ratio(times["folded", "step"], times["pair_fast", "step"]))
        result["max_abs_diff"].append(np.abs(nets["pair"](x) - nets["folded"](x)).max())
    return {k: np.array(v) for k, v in result.items()}


def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.recalibration.run")
    steps, n_seeds = (150, 1) if quick else (800, 5)
    checkpoints = np.unique(np.geomspace(10, steps, 7 if quick else 10).astype(int))
    runs = []
    for i in range(n_seeds):
        runs.append(train(steps, set(checkpoints.tolist()), seed + i))
        if progress:
            progress(i + 1, n_seeds + 1, f"seed {seed + i}")
    result = {"steps": checkpoints, "seeds": np.arange(seed, seed + n_seeds), "lr": LR, "batch": BATCH,
              "same_weights": all(r.pop("same_weights") for r in runs)}
    for m in MOMENTA:  # |difference| of two unbiased estimates of a Gaussian mean, in standard deviations
        variance = m / ((2 - m) * BATCH) + 1 / (BATCH * CALIBRATION_BATCHES)
        result[f"mean_error_floor/{m}"] = np.sqrt(2 / np.pi * variance)
    result.update({k: np.stack([r[k] for r in runs]) for k in runs[0]})  # (seeds, checkpoints)
    widths = (64, 256) if quick else (64, 256, 1024)
    timing = fold_timing(widths, 5 if quick else 40, seed=seed)
    result.update({"fold/widths": np.array(widths)} | {f"fold/{k}": v for k, v in timing.items()})
    if progress:
        progress(n_seeds + 1, n_seeds + 1, "fold timing")
    return result


def _band(ax, x, values, name, label, styles=(COLORS, MARKERS, LINESTYLES)):
    """The median over seeds as a line, the range as a shaded band."""
    ax.plot(x, np.median(values, axis=0), label=label, **_plot.series(name, *styles))
    if len(values) > 1:
        ax.fill_between(x, values.min(axis=0), values.max(axis=0), color=styles[0][name], alpha=0.15)


def plot(result, outdir):
    steps, n = result["steps"], len(result["seeds"])
    paths = []
    with _plot.figure(ncols=2, size=(19, 8.5)) as (fig, (ax1, ax2)):
        for mode in MODES:
            _band(ax1, steps, result[f"loss/{mode}"], mode, LABELS[mode])
        for key, label in ERRORS.items():
            stat, m = key.split()
            _band(ax2, steps, 100 * result[f"{stat}_error/{m}"], key, label,
                  (ERROR_COLORS, ERROR_MARKERS, ERROR_LINESTYLES))
        for m in MOMENTA:
            ax2.axhline(100 * result[f"mean_error_floor/{m}"], color=ERROR_COLORS[f"mean {m}"], lw=1.5,
                        ls=ERROR_LINESTYLES[f"mean {m}"], label=f"sampling noise of the mean, momentum {m}")
        ax1.set(xscale="log", title="Test loss, evaluated three ways", xlabel="training step (log)",
                ylabel="cross entropy (nats)")
        ax2.set(xscale="log", yscale="log", title="Running statistics vs recalibrated",
                xlabel="training step (log)", ylabel="error (% of std; % for log variance)")
        for ax in (ax1, ax2):
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, fontsize=13)
        fig.suptitle(f"MLP 20-{'-'.join([str(WIDTH)] * DEPTH)}-10 with BatchNorm, SGD lr={result['lr']:g}, "
                     f"batches of {result['batch']}; median and range of {n} seed{'s' if n > 1 else ''}")
        paths.append(_plot.save(fig, outdir, "recalibration"))

    with _plot.figure(size=(11, 6.5)) as (fig, ax):
        widths = result["fold/widths"]
        pos = np.arange(len(widths))
        bars = ((-0.27, "pair", "running 0.1", None, "Linear -> BatchNorm1d (eval), reference tier"),
                (0.0, "pair_fast", "running 0.01", "..", "Linear -> BatchNorm1d (eval), fast tier"),
                (0.27, "folded", "recalibrated", "//", "folded Linear"))
        for offset, key, name, hatch, label in bars:
            ax.bar(pos + offset, 1e3 * result[f"fold/{key}"], width=0.27, color=COLORS[name], label=label,
                   hatch=hatch, edgecolor="k")
        for p, r, rf in zip(pos, result["fold/ratio"], result["fold/ratio_fast"]):
            ax.annotate(f"x{r:.2f}\nx{rf:.2f}", (p + 0.27, 1e3 * result["fold/folded"][p]), ha="center",
                        va="bottom", xytext=(0, 4), textcoords="offset points", fontsize=13)
        ax.set(yscale="log", xticks=pos, xticklabels=[str(w) for w in widths], xlabel="width C (Linear C x C)",
               ylabel="forward time (ms, median)",
               title="Above the folded bars: folded time / pair time (reference; fast)")
        ax.set_ylim(top=8 * ax.get_ylim()[1])  # room for the ratios above the bars
        ax.legend(loc="upper left")
        fig.suptitle("Folding BatchNorm into the Linear, batches of 256, one thread, median over rounds")
        paths.append(_plot.save(fig, outdir, "recalibration_fold"))
    return paths
