"""BatchNorm before or after the activation, and the bias a BatchNorm makes useless.

Ioffe & Szegedy put BatchNorm between a layer and its nonlinearity (Linear -> BN -> ReLU);
many practitioners put it after (Linear -> ReLU -> BN), and neither the folklore nor the
literature has a settled answer. Here both placements train the same MLP on the synthetic
10-class ``teacher_task``: 20 inputs, 2 or 8 hidden layers of width 64 with ReLU, plain SGD
(no momentum, no weight decay), batches of 64, 2000 steps, 20000 training and 2000 held-out
samples, learning rates 0.01, 0.1 and 1, five seeds. A seed fixes the initial weights and the
batches, the same for both placements, so each seed is a paired comparison. Measured: the
training loss at every step (the last tenth averaged as the final loss), and the accuracy on
the training and held-out sets in evaluation mode at the end. This grid is the whole
configuration, not a sweep's pick.

What it shows: at this scale the placement barely matters. BN after the ReLU reaches a lower
training loss in every seed with 2 hidden layers (by a median of 0.08 nats at lr 0.01, 0.03 at
0.1 and 1) and at lr 0.01 with 8 (0.06 nats); with 8 layers at lr 0.1 and 1 the two are level
(paired differences under 0.02 nats, of both signs). Held-out accuracy differs by at most 1.5
points between the medians, inside or next to the spread of the seeds (71 to 80 % across all
settings). One difference between the two networks: with BN after the ReLU every Linear after
the first, the head included, receives zero-mean inputs, which is known to help plain SGD
(LeCun et al. 1998); this experiment does not test whether that is the reason.

Second, shown rather than argued: a bias b added right before a BatchNorm is useless. BN
subtracts the batch mean, so z + b and z give the same output, and the gradient
dL/db = sum over the batch of dL/dz is exactly zero (BN's backward is
gamma / sigma * (g - mean(g) - x_hat * mean(g * x_hat)), whose batch sum vanishes because
x_hat sums to zero). In float64 it comes out at 1e-17 to 1e-16, rounding error, against about 1
for the same layers' weights and 0.1 for the biases of the Linears before the ReLU when BN
comes after it. Under plain SGD without weight decay such a bias therefore keeps its initial
value (it moved by at most 1e-16 in 2000 steps) while BN's beta does its job; this is why a
Linear or convolution followed by a BatchNorm is built with ``bias=False``. (With weight
decay the bias would decay towards zero, still without any effect on the output.)

What not to conclude: that BN after the activation is better. The advantage is in training
loss, small, and gone for the deeper network at the larger learning rates; held-out accuracy
does not separate the two. This is one small MLP on one synthetic task with plain SGD; with
convolutions, momentum, other widths or other activations the answer may differ either way.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, Linear
from ..perf.threads import single_thread
from . import _plot
from ._nn import mlp, sgd, teacher_task, train_step
from .warmup import smooth

NAME = "bn_placement"
TITLE = N_("BatchNorm before or after the ReLU, and the bias before a BatchNorm")  # shown as _(TITLE)
TAKEAWAY = ("In a small ReLU MLP, BatchNorm after the activation reaches a slightly lower training loss "
            "than before it (most at a small learning rate, none for 8 layers at the larger ones), and the "
            "held-out accuracy of the two is the same within 1.5 points; a bias right before a BatchNorm "
            "gets a gradient of about 1e-16, rounding error for an exact zero, and never moves from its "
            "initial value.")

PLACEMENTS = ("before", "after")  # Linear -> BN -> ReLU, Linear -> ReLU -> BN
COLORS = {"before": _plot.OKABE_ITO["blue"], "after": _plot.OKABE_ITO["vermillion"]}
MARKERS = {"before": "o", "after": "s"}
LINESTYLES = {"before": "-", "after": "--"}
LABELS = {"before": "Linear -> BN -> ReLU (before)", "after": "Linear -> ReLU -> BN (after)"}
WIDTH, BATCH = 64, 64


def _data(seed, n_train, n_test=2000):
    rng = np.random.default_rng([seed, 20])
    return teacher_task(n_train, rng=rng) + teacher_task(n_test, rng=rng)


class _Watch:
    """An optimizer seen through a window: before each step it records the gradient norms of the
    hidden Linears' biases and weights, after it how far any of those biases has moved from its
    initial value (the largest |b_t - b_0|)."""

    def __init__(self, optimizer, layers):
        self.optimizer, self.layers = optimizer, layers
        self.start = [layer.bias.data.copy() for layer in layers]
        self.bias_grad, self.weight_grad, self.bias_moved = [], [], []

    def step(self):
        self.bias_grad.append(math.sqrt(sum(np.sum(m.bias.grad ** 2) for m in self.layers)))
        self.weight_grad.append(math.sqrt(sum(np.sum(m.weight.grad ** 2) for m in self.layers)))
        self.optimizer.step()
        self.bias_moved.append(max(np.max(np.abs(m.bias.data - b0)) for m, b0 in zip(self.layers, self.start)))

    def zero_grad(self):
        self.optimizer.zero_grad()


def accuracy(model, x, labels):
    """Accuracy of ``model`` in evaluation mode (BatchNorm's running statistics)."""
    model.eval()
    correct = np.mean(np.argmax(model(x), axis=1) == labels)
    model.train()
    return float(correct)


def train(placement, depth, lr, steps, data, seed):
    """Train the MLP (``depth`` hidden layers of WIDTH, ReLU, BatchNorm at ``placement``) by plain
    SGD (no momentum, no weight decay) on batches of BATCH. Every Linear's bias starts at
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), PyTorch's default, so it has a value to keep or lose.

    Returns dict: ``loss`` (steps,) the training batches' cross entropy; ``train_accuracy`` and
    ``test_accuracy`` at the end; ``bias_grad`` and ``weight_grad`` (steps,) the gradient norms of
    the hidden Linears' biases and weights at each step; ``bias_moved`` (steps,) the largest
    |b_t - b_0| over those biases after each step.
    """
    x, y, x_test, y_test = data
    rng = np.random.default_rng([seed, 3])
    model = mlp([x.shape[1]] + [WIDTH] * depth + [10], "relu", BatchNorm1d, rng=rng,
                norm_after=placement == "after")
    linears = [m for m in model if isinstance(m, Linear)]
    for m in linears:
        m.bias.data[...] = rng.uniform(-1, 1, m.out_features) / math.sqrt(m.in_features)
    watch = _Watch(sgd(model, lr), linears[:-1])
    loss = [train_step(model, watch, x[idx], y[idx]) for idx in rng.integers(0, len(x), (steps, BATCH))]
    return {"loss": np.array(loss), "train_accuracy": accuracy(model, x, y),
            "test_accuracy": accuracy(model, x_test, y_test), "bias_grad": np.array(watch.bias_grad),
            "weight_grad": np.array(watch.weight_grad), "bias_moved": np.array(watch.bias_moved)}


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train both placements at every depth and learning rate from ``n_seeds`` initialisations.

    ``loss`` is (placements, depths, lrs, seeds, steps); ``train_accuracy``, ``test_accuracy`` and
    ``final_loss`` (the mean of the last tenth of the loss curve) are (placements, depths, lrs,
    seeds); ``bias_grad``, ``weight_grad`` and ``bias_moved`` are (placements, seeds, steps), from
    the first depth at the learning rate ``lrs[watch_lr]``.
    """
    quick = flag(quick, "quick", "experiments.bn_placement.run")
    depths, lrs, n_seeds, steps, n_train = (((2,), (0.01, 0.1), 2, 500, 5000) if quick else
                                            ((2, 8), (0.01, 0.1, 1.0), 5, 2000, 20000))
    watch_lr = 1
    data = _data(seed, n_train)
    shape = (len(PLACEMENTS), len(depths), len(lrs), n_seeds)
    loss = np.zeros(shape + (steps,))
    train_acc, test_acc = np.zeros(shape), np.zeros(shape)
    watched = {k: np.zeros((len(PLACEMENTS), n_seeds, steps)) for k in ("bias_grad", "weight_grad", "bias_moved")}
    done = 0
    for index in np.ndindex(shape):
        p, d, r, s = index
        history = train(PLACEMENTS[p], depths[d], lrs[r], steps, data, seed * 1000 + s)
        loss[index], train_acc[index], test_acc[index] = (history["loss"], history["train_accuracy"],
                                                          history["test_accuracy"])
        if d == 0 and r == watch_lr:
            for k in watched:
                watched[k][p, s] = history[k]
        done += 1
        if progress is not None:
            progress(done, len(loss.reshape(-1, steps)), f"{PLACEMENTS[p]}, depth {depths[d]}, lr {lrs[r]}, seed {s}")
    return {"placements": np.array(PLACEMENTS), "depths": np.array(depths), "lrs": np.array(lrs),
            "steps": steps, "n_train": n_train, "loss": loss, "final_loss": loss[..., -steps // 10:].mean(axis=-1),
            "train_accuracy": train_acc, "test_accuracy": test_acc, "watch_lr": lrs[watch_lr], **watched}


def _band(ax, x, runs, name, label, window=1, **overrides):
    """Median (line) and range (shaded) over the first axis of ``runs`` (seeds, len(x))."""
    curves = np.array([smooth(r, window) for r in runs])  # (seeds, len(x))
    kw = _plot.series(name, COLORS, MARKERS, LINESTYLES, **overrides)
    ax.fill_between(x, curves.min(axis=0), curves.max(axis=0), color=kw["color"], alpha=0.2)
    ax.plot(x, np.median(curves, axis=0), markevery=max(1, len(x) // 6), label=label, **kw)


def _per_lr_panel(ax, lrs, values, title, ylabel):
    """Median and range over seeds of ``values`` (placements, lrs, seeds) against the learning rate."""
    for p, name in enumerate(PLACEMENTS):
        mid = np.median(values[p], axis=1)  # (lrs,)
        ax.errorbar(lrs, mid, yerr=[mid - values[p].min(axis=1), values[p].max(axis=1) - mid], capsize=6,
                    **_plot.series(name, COLORS, MARKERS, LINESTYLES), label=LABELS[name])
    ax.set(title=title, xscale="log", xlabel="SGD learning rate", ylabel=ylabel)
    ax.set_xticks(lrs, [f"{v:g}" for v in lrs])
    ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())


def plot(result, outdir):
    depths, lrs, steps = result["depths"], result["lrs"], np.arange(1, result["steps"] + 1)
    n_seeds, lr = result["loss"].shape[3], result["watch_lr"]
    r = int(np.flatnonzero(lrs == lr)[0])
    paths = []
    with _plot.figure(ncols=4, nrows=len(depths), size=(26, 6.5 * len(depths))) as (fig, axes):
        axes = np.reshape(axes, (len(depths), 4))
        for d, depth in enumerate(depths):
            ax = axes[d, 0]
            for p, name in enumerate(PLACEMENTS):
                _band(ax, steps, result["loss"][p, d, r], name, LABELS[name], window=50)
            ax.set(title=f"{depth} hidden layers: loss at lr {lr:g}", xlabel="SGD step",
                   ylabel="training cross entropy (nats)")
            ax.legend(loc="upper right")
            _per_lr_panel(axes[d, 1], lrs, result["final_loss"][:, d], f"{depth} hidden layers: final loss",
                          "training cross entropy (nats)")
            accuracy = {"training set": result["train_accuracy"][:, d], "held-out set": result["test_accuracy"][:, d]}
            for ax, (where, acc) in zip(axes[d, 2:], accuracy.items()):
                _per_lr_panel(ax, lrs, 100 * acc, f"{depth} hidden layers: {where}", "accuracy (%)")
            low = 100 * min(a.min() for a in accuracy.values())
            high = 100 * max(a.max() for a in accuracy.values())
            for ax in axes[d, 2:]:
                ax.set_ylim(low - 2, high + 2)
            axes[d, 1].legend(loc="upper right")
        fig.suptitle(f"BatchNorm before or after the ReLU: MLP of width {WIDTH}, plain SGD, batch {BATCH}, "
                     f"{result['n_train']} training samples;\nmedian and range of {n_seeds} seeds "
                     f"(accuracy in evaluation mode, after {result['steps']} steps)")
        paths.append(_plot.save(fig, outdir, "bn_placement"))

    with _plot.figure(ncols=2, size=(19, 7)) as (fig, (ax1, ax2)):
        _band(ax1, steps, result["weight_grad"][0], "before", "weights of the same Linears (before BN)", window=20,
              color=_plot.OKABE_ITO["green"], marker="^", linestyle="-.")
        _band(ax1, steps, result["bias_grad"][1], "after", "biases of the Linears before ReLU (BN after)",
              window=20)
        _band(ax1, steps, result["bias_grad"][0], "before", "biases of the Linears before BN", window=20)
        ax1.set(title="Gradient norm at each step", xlabel="SGD step", ylabel="||dL/dW||, ||dL/db|| (log scale)",
                yscale="log", ylim=(1e-19, 1e2))
        ax1.annotate("float64 rounding of an exact 0", (0.5 * steps[-1], 3e-16), xytext=(0.3 * steps[-1], 1e-13),
                     arrowprops={"arrowstyle": "->"})
        ax1.legend(loc="center right")
        for p, name in enumerate(PLACEMENTS):
            _band(ax2, steps, result["bias_moved"][p], name,
                  "biases before BN (BN before ReLU)" if name == "before" else "biases before ReLU (BN after)")
        ax2.set(title="How far the biases have moved", xlabel="SGD step",
                ylabel="largest |b_t - b_0| (log scale)", yscale="log", ylim=(1e-19, 1e1))
        ax2.legend(loc="center right")
        depth = depths[0]
        fig.suptitle(f"A bias right before a BatchNorm gets a zero gradient (up to float64 rounding) and keeps its "
                     f"initial value:\n{depth} hidden layers, SGD lr {lr:g} without weight decay, biases start at "
                     f"U(-1/sqrt(fan_in), 1/sqrt(fan_in)); median and range of {n_seeds} seeds")
        paths.append(_plot.save(fig, outdir, "bn_placement_bias"))
    return paths
