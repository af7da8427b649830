"""Internal covariate shift (Ioffe & Szegedy 2015, Figure 1), at laptop scale.

A 3 x 100 sigmoid MLP (Linear -> [BatchNorm] -> sigmoid) learns a synthetic 10-class task
(``teacher_task``: labels from a fixed random network) by SGD with batches of 60, as in the
paper's MNIST experiment. During training we follow the distribution of the inputs of the last
hidden layer's sigmoids on a fixed held-out batch: their 15th, 50th and 85th percentiles. We
also record the held-out accuracy, and the final accuracy across learning rates.

What it shows: without BatchNorm the distribution each sigmoid sees keeps moving (the
"internal covariate shift" the paper names); with BatchNorm it stays put, the network learns
faster, and it still learns at a learning rate where the plain network does not.
"""

import numpy as np

from .. import BatchNorm1d, Sigmoid
from ..perf.threads import single_thread
from . import _plot
from ._nn import forward_recording, mlp, sgd, teacher_task, train_step

NAME = "covariate_shift"
TITLE = "Internal covariate shift in a 3x100 sigmoid MLP"
TAKEAWAY = ("Without BatchNorm the input distribution of a last-layer sigmoid keeps drifting during training; "
            "with BatchNorm it stays stable, the network learns faster, and it still learns at a learning rate "
            "where the plain network stays at chance.")

NORMS = {"none": None, "batchnorm": BatchNorm1d}
PERCENTILES = (15, 50, 85)
BATCH = 60


def _data(seed):
    rng = np.random.default_rng([seed, 99])
    x, y = teacher_task(20000, rng=rng)
    x_test, y_test = teacher_task(1000, rng=rng)
    return x, y, x_test, y_test


def train(norm, lr, steps, checkpoints, data, rng, on_step=None):
    """Train the 3 x 100 sigmoid MLP by SGD; at each of ``checkpoints`` evenly spaced steps record
    the held-out accuracy and the percentiles of the last sigmoids' inputs.

    Returns dict: ``steps`` (K,), ``accuracy`` (K,), ``percentiles`` (K, 3, 100) and ``loss`` (steps,).
    """
    x, y, x_test, y_test = data
    rng = np.random.default_rng(rng)
    model = mlp([x.shape[1], 100, 100, 100, 10], "sigmoid", norm, rng=rng)
    optimizer = sgd(model, lr)
    at = set(np.linspace(0, steps, checkpoints).astype(int))
    record = {"steps": [], "accuracy": [], "percentiles": [], "loss": []}
    for step in range(steps + 1):
        if step in at:
            record["steps"].append(step)
            model.eval()
            logits, sigmoid_inputs = forward_recording(model, x_test, Sigmoid)
            model.train()
            record["accuracy"].append(np.mean(np.argmax(logits, axis=1) == y_test))
            z = sigmoid_inputs[-1]  # (n_test, 100) the last sigmoids' inputs
            record["percentiles"].append(np.percentile(z, PERCENTILES, axis=0))
        if step < steps:
            idx = rng.integers(0, len(x), BATCH)
            record["loss"].append(train_step(model, optimizer, x[idx], y[idx]))
        if on_step:
            on_step()
    return {k: np.array(v) for k, v in record.items()}


def relative_drift(percentiles, skip=0.1):
    """How far the distribution moves between checkpoints, in units of its own width:
    mean over units, percentiles and consecutive checkpoints of |change| / (p85 - p15),
    after the first ``skip`` fraction of training (where every network changes most)."""
    p = percentiles[int(skip * len(percentiles)):]  # (K, 3, units)
    width = p[:, -1] - p[:, 0]  # (K, units)
    return float(np.mean(np.abs(np.diff(p, axis=0)) / width[1:, None]))


@single_thread()
def run(quick=False, seed=0, progress=None):
    steps, checkpoints, seeds, lrs, sweep_steps = ((600, 21, 2, (1.0, 4.0, 16.0), 600) if quick
                                                   else (3000, 41, 3, (0.25, 1.0, 4.0, 16.0, 64.0), 2000))
    lr = 1.0
    data = _data(seed)
    total = len(NORMS) * (seeds * (steps + 1) + len(lrs) * (sweep_steps + 1))
    done = [0]

    def tick(label):
        def on_step():
            done[0] += 1
            if progress and done[0] % 100 == 0:
                progress(done[0], total, label)
        return on_step

    result = {"lr": lr, "lrs": np.array(lrs), "percentiles_q": np.array(PERCENTILES)}
    for name, norm in NORMS.items():
        runs = [train(norm, lr, steps, checkpoints, data, [seed, s], tick(f"{name}, lr {lr}, seed {s}"))
                for s in range(seeds)]
        result["steps"] = runs[0]["steps"]
        result[f"{name}/percentiles"] = runs[0]["percentiles"]  # (K, 3, 100), first seed
        result[f"{name}/accuracy"] = np.array([r["accuracy"] for r in runs])  # (seeds, K)
        result[f"{name}/drift"] = np.array([relative_drift(r["percentiles"]) for r in runs])  # (seeds,)
        result[f"{name}/lr_accuracy"] = np.array([
            train(norm, rate, sweep_steps, 2, data, [seed, 7], tick(f"{name}, lr {rate}"))["accuracy"][-1]
            for rate in lrs])
    if progress:
        progress(total, total, "done")
    return result


def plot(result, outdir):
    paths = []
    steps = result["steps"]
    unit = 0
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, axes):
        for ax, name in zip(axes, NORMS):
            p = result[f"{name}/percentiles"][:, :, unit]  # (K, 3)
            color = _plot.COLORS[name]
            ax.fill_between(steps, p[:, 0], p[:, 2], color=color, alpha=0.2)
            for i, q in enumerate(result["percentiles_q"]):
                label = "median" if q == 50 else ("15th / 85th percentile" if i == 0 else None)
                ax.plot(steps, p[:, i], color=color, lw=4 if q == 50 else 2, ls="-" if q == 50 else "--",
                        label=label)
            per_100 = result[f"{name}/drift"].mean() * 100 / (steps[1] - steps[0])
            ax.set(title=f"{_plot.LABELS[name]}: moves {per_100:.2f} widths per 100 steps",
                   xlabel="training step", ylabel="input of one last-layer sigmoid")
            ax.legend(loc="best")
        fig.suptitle("The distribution a sigmoid sees during training (Ioffe & Szegedy 2015, Fig. 1)")
        paths.append(_plot.save(fig, outdir, "covariate_shift_percentiles"))

    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            acc = result[f"{name}/accuracy"]
            color = _plot.COLORS[name]
            ax1.plot(steps, 100 * acc.mean(0), color=color, label=f"{_plot.LABELS[name]} (lr {result['lr']:g})")
            ax1.fill_between(steps, 100 * acc.min(0), 100 * acc.max(0), color=color, alpha=0.2)
            ax2.semilogx(result["lrs"], 100 * result[f"{name}/lr_accuracy"], marker="o", color=color,
                         label=_plot.LABELS[name])
        ax2.axhline(10, color="k", ls=":", lw=2, label="chance (10 classes)")
        ax1.set(title="Held-out accuracy during training", xlabel="training step", ylabel="accuracy (%)")
        ax2.set(title="Final accuracy across learning rates", xlabel="SGD learning rate (log scale)",
                ylabel="accuracy (%)", ylim=(0, 100))
        ax1.legend(loc="lower right")
        ax2.legend(loc="lower left")
        fig.suptitle("BatchNorm learns faster and tolerates a higher learning rate")
        paths.append(_plot.save(fig, outdir, "covariate_shift_accuracy"))
    return paths
