"""BatchNorm's running statistics: what momentum 0.1, 0.9 and None converge to, and how fast.

A stream of batches of n = 8 samples, each of C channels drawn from N(mu, sigma^2), goes through
three BatchNorm1d layers in training mode that differ only in ``momentum``::

    running = (1 - momentum) * running + momentum * batch_statistic     (PyTorch's convention)

* ``momentum=0.1`` (the default): an exponential average with time constant 1/0.1 = 10 batches;
  it forgets the initial (0, 1) in about 30 batches and then fluctuates a little around the truth.
* ``momentum=0.9``: the *flipped* convention (0.9 is the decay in frameworks that write
  ``running = momentum * running + (1 - momentum) * batch``); here it keeps 90% of the newest
  batch, so the running statistics are nearly the last batch's, as noisy as a single batch.
* ``momentum=None``: the cumulative average of all batches so far; its error keeps shrinking
  like 1/sqrt(t).

The running variance averages the *unbiased* batch variance (times n / (n - 1)), so it settles
at sigma^2; the biased variance BatchNorm normalises with averages to sigma^2 (n - 1) / n.
The C channels are independent replicates, so statistics over channels measure the noise.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d
from . import _plot

NAME = "running_stats"
TITLE = N_("BatchNorm running statistics: momentum 0.1, 0.9 and None")  # shown as _(TITLE)
TAKEAWAY = ("momentum=0.1 averages over about 10 batches (forgets its start in ~30); the flipped 0.9 keeps "
            "little more than the last batch and stays as noisy as one batch; None is the exact cumulative "
            "average; the running variance is unbiased and settles at sigma^2, not sigma^2 (n-1)/n.")

MU, SIGMA, N = 3.0, 2.0, 8
MOMENTA = {"0.1": 0.1, "0.9": 0.9, "None": None}
COLORS = {"0.1": _plot.OKABE_ITO["blue"], "0.9": _plot.OKABE_ITO["vermillion"], "None": _plot.OKABE_ITO["green"]}
MARKERS = {"0.1": "o", "0.9": "X", "None": "^"}
LINESTYLES = {"0.1": "-", "0.9": "-", "None": "--"}  # 0.9 is drawn thin, which tells it apart


def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.running_stats.run")
    steps, channels = (200, 256) if quick else (1000, 512)
    rng = np.random.default_rng([seed, 9])
    layers = {k: BatchNorm1d(channels, momentum=m) for k, m in MOMENTA.items()}
    trace = {k: {"mean": np.empty((steps, channels)), "var": np.empty((steps, channels))} for k in MOMENTA}
    batch_mean, batch_var_biased = np.empty((steps, channels)), np.empty((steps, channels))
    for t in range(steps):
        x = rng.normal(MU, SIGMA, (N, channels))  # (n, C)
        batch_mean[t], batch_var_biased[t] = x.mean(axis=0), x.var(axis=0)
        for k, bn in layers.items():
            bn(x)
            trace[k]["mean"][t], trace[k]["var"][t] = bn.running_mean, bn.running_var
        if progress and (t + 1) % 50 == 0:
            progress(t + 1, steps, f"batch {t + 1}")
    late = slice(steps // 2, None)
    result = {"steps": np.arange(1, steps + 1), "mu": MU, "sigma2": SIGMA ** 2, "n": N,
              "biased_batch_var_mean": batch_var_biased.mean(),
              "unbiased_batch_var_mean": batch_var_biased.mean() * N / (N - 1)}
    cumulative_mean = np.cumsum(batch_mean, axis=0) / result["steps"][:, None]
    for k in MOMENTA:
        m, v = trace[k]["mean"], trace[k]["var"]
        result[f"{k}/mean_channel0"], result[f"{k}/var_channel0"] = m[:, 0], v[:, 0]
        result[f"{k}/mean_rms_error"] = np.sqrt(np.mean((m - MU) ** 2, axis=1))  # (steps,) over channels
        result[f"{k}/var_rms_error"] = np.sqrt(np.mean((v - SIGMA ** 2) ** 2, axis=1))
        result[f"{k}/late_mean_of_var"] = v[late].mean()  # what the running variance settles at
        result[f"{k}/late_mean_of_mean"] = m[late].mean()
        result[f"{k}/late_noise_of_mean"] = m[late].std()  # spread around the settled value
        # first step after which the channel-averaged running mean stays within 5% of mu
        off = np.abs(m.mean(axis=1) - MU) > 0.05 * MU
        result[f"{k}/steps_to_5pct"] = int(np.nonzero(off)[0].max() + 2) if off.any() else 1
        result[f"{k}/max_dev_from_cumulative_mean"] = np.max(np.abs(m - cumulative_mean))
    return result


def plot(result, outdir):
    t = result["steps"]
    show = slice(0, min(len(t), 200))
    paths = []
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for i, k in enumerate(MOMENTA):
            noisy = k == "0.9"  # drawn thin, so that it does not hide the others
            kw = dict(_plot.series(k, COLORS, MARKERS, LINESTYLES, markevery=(8 * i, 25)),
                      label=f"momentum={k}", lw=1.5 if noisy else 3, alpha=0.75 if noisy else 1)
            ax1.plot(t[show], result[f"{k}/mean_channel0"][show], **kw)
            ax2.plot(t[show], result[f"{k}/var_channel0"][show], **kw)
        ax1.axhline(result["mu"], color="k", ls=":", lw=2.5, label=f"true mean {result['mu']:g}")
        ax2.axhline(result["sigma2"], color="k", ls=":", lw=2.5, label=f"true variance {result['sigma2']:g}")
        n = result["n"]
        ax2.axhline(result["sigma2"] * (n - 1) / n, color=_plot.OKABE_ITO["purple"], ls="-.", lw=3,
                    label=f"biased: sigma^2 (n-1)/n = {result['sigma2'] * (n - 1) / n:g}")
        ax1.set(title="running_mean (one channel)", xlabel="training batches seen", ylabel="running_mean")
        ax2.set(title="running_var (one channel)", xlabel="training batches seen", ylabel="running_var")
        for ax in (ax1, ax2):
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        fig.suptitle(f"BatchNorm1d running statistics, batches of n={n} from N({result['mu']:g}, "
                     f"{result['sigma2']:g}), running = (1 - m) running + m batch")
        paths.append(_plot.save(fig, outdir, "running_stats_traces"))

    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for k in MOMENTA:
            kw = dict(_plot.series(k, COLORS, MARKERS, LINESTYLES, markevery=0.1), label=f"momentum={k}")
            ax1.loglog(t, result[f"{k}/mean_rms_error"], **kw)
            ax2.loglog(t, result[f"{k}/var_rms_error"], **kw)
        single = SIGMA / np.sqrt(result["n"])  # the error of one batch's mean
        ax1.loglog(t, single / np.sqrt(t), "k:", lw=2, label="sigma / sqrt(n t): average of t batches")
        ax1.axhline(single, color="gray", ls=(0, (1, 3)), lw=2.5, label="sigma / sqrt(n): one batch")
        for ax, stat in ((ax1, "running_mean"), (ax2, "running_var")):
            ax.set(title=f"Error of {stat}", xlabel="training batches seen (log)",
                   ylabel="RMS error over channels")
        ax1.legend(loc="lower left", fontsize=12)
        ax2.legend(loc="lower left")
        fig.suptitle("How fast, and how close: 0.1 settles in ~30 batches, 0.9 stays noisy, None keeps improving")
        paths.append(_plot.save(fig, outdir, "running_stats_convergence"))
    return paths
