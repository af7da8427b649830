"""BatchNorm's batch noise as a regulariser? Measured at laptop scale, with ghost batches.

In training, BatchNorm normalises each sample with the mean and variance of its batch, so a
sample's output depends on which other samples it is batched with: noise, of a size that
grows as the batch shrinks (the batch mean of k unit-variance values is off by 1/sqrt(k)).
A common claim is that this noise regularises, like dropout: it makes training harder to fit
and the network generalise better, more so at small batches (Ioffe & Szegedy 2015 drop
dropout in their BatchNorm network partly for this reason; Luo et al. 2019 analyse it).

To measure the noise alone, the SGD batch stays fixed (64 samples, the same steps, learning
rate and data for every run) and only the number of samples BatchNorm takes its statistics
from changes: *ghost batches* (Hoffer et al. 2017), the batch of 64 cut into groups of k, each
normalised with its own statistics, k = 64 being ordinary BatchNorm. An MLP (Linear -> norm ->
ReLU, twice, width 128, then a Linear head) learns a small training set of the synthetic
10-class task (``teacher_task``, 512 samples, 150 epochs) well past fitting it. We measure
the held-out accuracy (evaluation mode), the training accuracy, and the training loss in
evaluation mode (running statistics) and in training mode (ghost-batch statistics, the
loss the optimiser sees).

What it shows, here (the full run, 3 seeds): the noise is real. The training loss measured
in training mode (the loss the optimiser sees) stays above the same loss in evaluation mode,
by 0.007 with ghost batches of 64 and by 0.5 with ghost batches of 4 (a train/eval gap); with
2 samples per statistic every value becomes +1 or -1 and the network no longer fits its
training set. But the noise does *not* regularise: every BatchNorm variant generalises worse
than the same network without a norm (52% to 64% held-out accuracy against 69%), and the
noisier, smaller ghost batches do worse, if not steadily (64% at 64, 58% to 60% at 4 to 16,
52% at 2). At this scale (a small MLP, a
noiseless synthetic task) the regularising effect reported for large convolutional networks
does not show; what not to conclude is that it never exists.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import InstanceNorm1d
from ..module import Module, Sequential
from ..nn import CrossEntropyLoss, ReLU
from ..perf.threads import single_thread
from . import _plot
from ._nn import linear, sgd, teacher_task, train_step

NAME = "batch_noise"
TITLE = N_("BatchNorm's batch noise: a train/eval gap, but no better generalisation here")  # shown as _(TITLE)
TAKEAWAY = ("With the SGD batch fixed at 64 and BatchNorm's statistics taken over ghost batches of 64 down to 4 "
            "samples, the training loss in training mode rises ever further above the same loss in evaluation mode "
            "(a gap of 0.007 growing to 0.5), yet no BatchNorm variant generalises as well as the same MLP without a "
            "norm (52% to 64% held out against 69%): at this scale the batch noise does not regularise.")

WIDTH, BATCH, LR = 128, 64, 0.1


class GhostBatchNorm(Module):
    """BatchNorm1d whose training statistics come from groups of ``ghost`` consecutive samples.

    Input (N, C) with N a multiple of ``ghost``. Each group of ``ghost`` samples is one
    instance of an ``InstanceNorm1d(C, affine=True, track_running_stats=True)``: the batch is
    reshaped to (N / ghost, C, ghost), so each (group, channel) is standardised over the ghost
    batch's samples, with one gamma and beta per channel shared by every group. In evaluation
    the running statistics (the average of the groups' statistics) are used, whatever N. The
    backward is InstanceNorm's, reshaped back. ``ghost = N`` is ordinary BatchNorm.

    ``nc.GhostBatchNorm1d`` is the layer for general use; it normalises the same way but updates
    the running statistics once per group, in order, as a BatchNorm applied group by group does.
    This device updates them once per batch, with the groups' averaged statistics, and is kept
    so that the experiment's measured numbers stay what the README reports.
    """

    def __init__(self, num_features, ghost):
        super().__init__()
        self.ghost = ghost
        self.norm = InstanceNorm1d(num_features, affine=True, track_running_stats=True)

    def forward(self, x):
        n, c = x.shape
        k = self.ghost if self.training else n                   # evaluation: any grouping will do
        if n % k:
            raise ValueError(f"GhostBatchNorm(ghost={self.ghost}) expected a batch that is a multiple of "
                             f"{self.ghost}, got {n} samples")
        self._cache = (n, c, k)
        y = self.norm(x.reshape(n // k, k, c).transpose(0, 2, 1))  # (N / k, C, k)
        return y.transpose(0, 2, 1).reshape(n, c)

    def backward(self, dy):
        n, c, k = self._cached()
        dx = self.norm.backward(dy.reshape(n // k, k, c).transpose(0, 2, 1))  # (N / k, C, k)
        return dx.transpose(0, 2, 1).reshape(n, c)


def model(ghost, rng):
    """Linear -> [GhostBatchNorm] -> ReLU, twice, then a Linear head; ghost=None: no norm."""
    std = (2 / WIDTH) ** 0.5
    layers = []
    for n_in in (20, WIDTH):
        layers.append(linear(n_in, WIDTH, std, rng))
        if ghost is not None:
            layers.append(GhostBatchNorm(WIDTH, ghost))
        layers.append(ReLU())
    return Sequential(*layers, linear(WIDTH, 10, std, rng))


def _loss(net, x, labels):
    with np.errstate(over="ignore", invalid="ignore"):
        return float(CrossEntropyLoss()(net(x), labels))


def train_and_measure(ghost, epochs, data, rng):
    """Train for ``epochs`` epochs of batches of 64; return (held-out accuracy, training accuracy,
    training loss in evaluation mode, training loss in training mode)."""
    x, y, x_test, y_test = data
    rng = np.random.default_rng(rng)
    net = model(ghost, rng)
    optimizer = sgd(net, LR)
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(x) - BATCH + 1, BATCH):
            idx = order[i:i + BATCH]
            train_step(net, optimizer, x[idx], y[idx])
    order = rng.permutation(len(x))  # training mode: the loss the optimiser sees, batch by batch
    train_mode = np.mean([_loss(net, x[order[i:i + BATCH]], y[order[i:i + BATCH]])
                          for i in range(0, len(x) - BATCH + 1, BATCH)])
    net.eval()
    test_acc = float(np.mean(np.argmax(net(x_test), axis=1) == y_test))
    train_acc = float(np.mean(np.argmax(net(x), axis=1) == y))
    eval_mode = _loss(net, x, y)
    return test_acc, train_acc, eval_mode, float(train_mode)


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.batch_noise.run")
    ghosts, epochs, seeds = ((2, 4, 64), 30, 1) if quick else ((2, 4, 8, 16, 32, 64), 150, 3)
    rng = np.random.default_rng([seed, 17])
    data = teacher_task(512, rng=rng) + teacher_task(4000, rng=rng)
    configs = [None] + list(ghosts)
    total, done = len(configs) * seeds, 0
    result = {"ghosts": np.array(ghosts), "epochs": epochs, "n_train": 512, "batch": BATCH}
    for ghost in configs:
        key = "none" if ghost is None else f"ghost{ghost}"
        measured = []
        for s in range(seeds):
            measured.append(train_and_measure(ghost, epochs, data, [seed, s]))
            done += 1
            if progress:
                progress(done, total, f"{key}, seed {s}")
        result[f"{key}/test_acc"], result[f"{key}/train_acc"], result[f"{key}/eval_loss"], \
            result[f"{key}/train_loss"] = np.array(measured).T  # each (seeds,)
    return result


def plot(result, outdir):
    k = result["ghosts"]

    def series(name):  # (seeds, len(k))
        return np.array([result[f"ghost{g}/{name}"] for g in k]).T

    bn, none = _plot.COLORS["batchnorm"], _plot.COLORS["none"]
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        test, train = 100 * series("test_acc"), 100 * series("train_acc")
        ax1.plot(k, train.mean(0), color=bn, ls="--", marker="s", label="BatchNorm, training set")
        ax1.plot(k, test.mean(0), color=bn, marker="o", label="BatchNorm, held out")
        ax1.fill_between(k, test.min(0), test.max(0), color=bn, alpha=0.2)
        for values, ls, what in ((result["none/train_acc"], ":", "training set"),
                                 (result["none/test_acc"], "-.", "held out")):
            ax1.axhline(100 * values.mean(), color=none, ls=ls, label=f"no norm, {what}")
        ax1.set(title="Accuracy (evaluation mode)", xlabel="ghost batch: samples per BatchNorm statistic",
                ylabel="accuracy (%)")
        gap_eval, gap_train = series("eval_loss"), series("train_loss")
        ax2.plot(k, gap_train.mean(0), color=bn, marker="o", label="training mode (ghost-batch statistics)")
        ax2.plot(k, gap_eval.mean(0), color=bn, ls="--", marker="s", label="evaluation mode (running statistics)")
        ax2.axhline(result["none/eval_loss"].mean(), color=none, ls="-.", label="no norm (either mode)")
        ax2.set(title="Loss on the training set", xlabel="ghost batch: samples per BatchNorm statistic",
                ylabel="cross entropy", yscale="log")
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xticks(k, [str(v) for v in k])
            ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)  # below: covers no data
        fig.suptitle(f"SGD batch {result['batch']}, {result['n_train']} training samples, {result['epochs']} epochs: "
                     "BatchNorm's statistics from ghost batches")
        return [_plot.save(fig, outdir, "batch_noise")]
