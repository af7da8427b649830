"""Small batches: what BatchNorm's fixes do when each batch statistic comes from 2 to 32 samples.

Six networks, the same MLP as the batch_size experiment (Linear -> norm -> ReLU, twice, width
64, then a Linear head) on the synthetic 10-class teacher task, at a fixed budget of samples
seen, with "b" the number of samples one set of batch statistics comes from (the per-worker
batch of data-parallel training):

* **BatchNorm**, **Batch Renorm** (Ioffe 2017; r_max 3, d_max 5, relaxed linearly from
  BatchNorm between 10% and 50% of the steps), **GroupNorm** (8 groups of 8) and **GroupNorm +
  Weight Standardization** (Qiao et al. 2019; ``WSLinear`` before each GroupNorm): one worker,
  batches of b, the learning rate scaled linearly with b (0.4 at 32, as batch_size does), so a
  smaller b takes proportionally more, smaller steps.
* **Ghost BatchNorm** (Hoffer et al. 2017): batches of 32 whose statistics come from virtual
  batches of b; this is exactly what BatchNorm on each of 32 / b data-parallel workers with
  averaged gradients computes (apart from the running statistics: one update per virtual batch).
* **SyncBatchNorm**: 32 / b simulated workers (an ``InProcessGroup``) with b samples each,
  gradients averaged, the statistics over all 32.

The last two take the steps of a batch of 32 (the budget / 32 steps, learning rate 0.4) and draw
the same batches as BatchNorm at b = 32. Measured on 1000 held-out samples: the accuracy in
evaluation mode (running statistics) and the train/eval gap, mean |logits_train - logits_eval| /
std(logits_eval), with the training-mode logits computed batch by batch as in training.

Finding (full run, 12000 samples, 2 seeds; held-out accuracy in evaluation mode, the two seeds'
range): BatchNorm reaches 0.75 at b = 32, 0.71-0.73 at 8, 0.68-0.71 at 4 and 0.33-0.34 at 2, its
gap growing from 0.18 to 0.76-0.89. Batch Renorm's gap is 0.37-0.49 times BatchNorm's at every b,
but its accuracy is no better at 4 and 8 (0.65-0.72) and at 2 only 0.41-0.42. Ghost BatchNorm,
the statistics of b samples with steps of 32 (per-worker BatchNorm), does as BatchNorm at 32 to 4
and worse at 2 (0.24-0.31): the larger step's gradient does not make up for noisy statistics.
GroupNorm: 0.69-0.75 at every b, the same network in both modes (gap 0); with Weight
Standardization 0.66-0.71, lower than without at every b. SyncBatchNorm: 0.748 at every b, the
accuracies and gaps of BatchNorm at 32 to the last digit.

What not to conclude: that Batch Renorm or Weight Standardization do not work. Ioffe (2017) reports
Batch Renorm substantially better than BatchNorm with small and with non-i.i.d. minibatches
(Inception on ImageNet); here, a small MLP with one warm-up schedule and r_max, d_max not tuned, it
narrows the train/eval gap as designed but recovers little accuracy, and non-i.i.d. batches are
not tested. Qiao et al. (2019) evaluate Weight Standardization on convolutions (normcore has none)
in deep networks; here it standardises the rows of two Linear layers, which did not help. Nor
does the figure measure SyncBatchNorm's cost: the in-process group sends no messages over a
network.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, BatchRenorm1d, GhostBatchNorm1d, GroupNorm, WSLinear
from ..distributed import InProcessGroup, SyncBatchNorm
from ..module import Sequential
from ..nn import Linear
from ..perf.threads import single_thread
from . import _plot
from ._nn import mlp, sgd, teacher_task, train_step
from .sync_batchnorm import data_parallel_step

NAME = "small_batches"
# shown as _(TITLE)
TITLE = N_("Small batches: BatchNorm, Batch Renorm, Ghost BN, GroupNorm (+ WS) and SyncBatchNorm")
TAKEAWAY = ("With 2 samples behind each batch statistic BatchNorm falls from 75% to 33-34% held-out accuracy "
            "and its train/eval gap grows four- to fivefold; Batch Renorm cuts that gap to at most half at every batch "
            "size but wins back only 8 of the 41 points; GroupNorm stays at 69-75% whatever the batch, and Weight "
            "Standardization costs it 3-6 points here instead of helping; SyncBatchNorm with 2 samples on each of "
            "16 workers trains exactly as BatchNorm with 32.")

WIDTH, GROUPS, FULL_BATCH = 64, 8, 32
SIZES = [20, WIDTH, WIDTH, 10]
BASE_LR = 0.4  # at a batch of FULL_BATCH samples per step; scaled linearly with the batch
R_MAX, D_MAX = 3.0, 5.0
METHODS = ("batchnorm", "batchrenorm", "ghost", "groupnorm", "groupnorm_ws", "sync")
DATA_PARALLEL = ("ghost", "sync")  # batches of FULL_BATCH, statistics from b of them
LABELS = {"batchnorm": "BatchNorm", "batchrenorm": "Batch Renorm", "ghost": "Ghost BN (32, virtual b)",
          "groupnorm": "GroupNorm", "groupnorm_ws": "GroupNorm + WS", "sync": "SyncBatchNorm (32/b workers)"}
_OI = _plot.OKABE_ITO
COLORS = {"batchnorm": _OI["blue"], "batchrenorm": _OI["sky_blue"], "ghost": _OI["vermillion"],
          "groupnorm": _OI["purple"], "groupnorm_ws": _OI["green"], "sync": _OI["black"]}
MARKERS = {"batchnorm": "o", "batchrenorm": "s", "ghost": "X", "groupnorm": "D", "groupnorm_ws": "^",
           "sync": "v"}
LINESTYLES = {"batchnorm": "-", "batchrenorm": "--", "ghost": "-.", "groupnorm": (0, (6, 2, 1, 2)),
              "groupnorm_ws": ":", "sync": (0, (1, 1))}


def renorm_warmup(steps):
    """Batch Renorm's schedule: plain BatchNorm for the first 10% of the steps, r_max and d_max
    reached at 50% (Ioffe's ImageNet run relaxed them over 5k to 40k of its steps)."""
    return (steps // 10, steps // 2, steps // 2)


def norm_factory(method, b, steps):
    """``width -> norm module`` for ``method`` with statistics from b samples."""
    return {"batchnorm": BatchNorm1d,
            "batchrenorm": lambda c: BatchRenorm1d(c, r_max=R_MAX, d_max=D_MAX, warmup=renorm_warmup(steps)),
            "ghost": lambda c: GhostBatchNorm1d(c, virtual_batch_size=b),
            "groupnorm": lambda c: GroupNorm(GROUPS, c),
            "groupnorm_ws": lambda c: GroupNorm(GROUPS, c)}[method]


def standardize_weights(model):
    """The same network with every Linear before a GroupNorm replaced by a ``WSLinear`` holding
    the same weight and bias."""
    layers = list(model)
    for i, (a, b) in enumerate(zip(layers, layers[1:])):
        if isinstance(a, Linear) and isinstance(b, GroupNorm):
            layers[i] = WSLinear(a.in_features, a.out_features).load_state_dict(a.state_dict())
    return Sequential(*layers)


class Network:
    """One method's network at statistics batch b: one model, or 32 / b replicas for SyncBatchNorm."""

    def __init__(self, method, b, steps, seed):
        self.method, self.b = method, b
        rng = np.random.default_rng(seed)
        if method == "sync":
            self.group = InProcessGroup(FULL_BATCH // b)
            self.replicas = [mlp(SIZES, "relu", lambda c, w=w: SyncBatchNorm(c, process_group=w),
                                 rng=np.random.default_rng(seed)) for w in self.group.workers]
        else:
            self.group = None
            model = mlp(SIZES, "relu", norm_factory(method, b, steps), rng=rng)
            self.replicas = [standardize_weights(model) if method == "groupnorm_ws" else model]
        self.batch = FULL_BATCH if method in DATA_PARALLEL else b
        self.optimizers = [sgd(m, BASE_LR * self.batch / FULL_BATCH) for m in self.replicas]

    def step(self, x, labels):
        if self.group is None:
            return train_step(self.replicas[0], self.optimizers[0], x, labels)
        shards = np.split(np.arange(len(x)), self.group.world_size)
        return np.mean(self.group.run(lambda w, i: data_parallel_step(
            w, self.replicas[w.rank], self.optimizers[w.rank], x[i], labels[i]), shards))

    def eval_logits(self, x):
        return self.replicas[0].eval()(x)

    def train_mode_logits(self, x):
        """Training mode, batch by batch as in training; updates running statistics: call it last."""
        for m in self.replicas:
            m.train()
        batches = np.split(x, len(x) // self.batch)
        if self.group is None:
            return np.concatenate([self.replicas[0](xb) for xb in batches])
        return np.concatenate([np.concatenate(self.group.run(lambda w, s: self.replicas[w.rank](s),
                                                             np.split(xb, self.group.world_size)))
                               for xb in batches])


def train_and_measure(method, b, budget, data, seed):
    """(eval-mode accuracy, train-mode accuracy, train/eval gap) on the held-out set after
    ``budget`` samples; the batches are drawn by a generator seeded by (seed, batch size), so
    every network that steps with batches of 32 sees the same ones."""
    x, y, x_test, y_test = data
    net = Network(method, b, budget // b, seed)
    steps = budget // net.batch
    batch_rng = np.random.default_rng([seed, net.batch, 3])
    for _ in range(steps):
        idx = batch_rng.integers(0, len(x), net.batch)
        net.step(x[idx], y[idx])
    n = len(x_test) // FULL_BATCH * FULL_BATCH
    logits_eval = net.eval_logits(x_test[:n])
    logits_train = net.train_mode_logits(x_test[:n])
    acc_eval = np.mean(np.argmax(logits_eval, 1) == y_test[:n])
    acc_train = np.mean(np.argmax(logits_train, 1) == y_test[:n])
    gap = np.mean(np.abs(logits_train - logits_eval)) / logits_eval.std()
    return acc_eval, acc_train, gap


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Every method at every b from ``n_seeds`` initialisations; ``METHOD/accuracy``,
    ``METHOD/train_mode_accuracy`` and ``METHOD/gap`` are (seeds, len(batches))."""
    quick = flag(quick, "quick", "experiments.small_batches.run")
    batches, budget, n_seeds = ((32, 2), 1600, 1) if quick else ((32, 8, 4, 2), 12000, 2)
    rng = np.random.default_rng([seed, 37])
    data = teacher_task(20000, rng=rng) + teacher_task(1024, rng=rng)
    result = {"batch_sizes": np.array(batches), "budget": budget, "seeds": n_seeds, "lr": BASE_LR}
    total, done = len(METHODS) * len(batches) * n_seeds, 0
    for method in METHODS:
        measured = np.zeros((3, n_seeds, len(batches)))
        for s in range(n_seeds):
            for j, b in enumerate(batches):
                measured[:, s, j] = train_and_measure(method, b, budget, data, seed + s)
                done += 1
                if progress:
                    progress(done, total, f"{method}, b={b}, seed {s}")
        for key, values in zip(("accuracy", "train_mode_accuracy", "gap"), measured):
            result[f"{method}/{key}"] = values
    return result


def plot(result, outdir):
    b = result["batch_sizes"]
    n_seeds = result["seeds"]
    with _plot.figure(ncols=2, size=(19, 7.5)) as (fig, (ax_acc, ax_gap)):
        for method in METHODS:
            style = _plot.series(method, COLORS, MARKERS, LINESTYLES, markersize=12)
            acc, gap = 100 * result[f"{method}/accuracy"], result[f"{method}/gap"]
            ax_acc.plot(b, np.median(acc, axis=0), **style, label=LABELS[method])
            ax_gap.plot(b, np.median(gap, axis=0) + 1e-3, **style, label=LABELS[method])
            if n_seeds > 1:
                ax_acc.fill_between(b, acc.min(axis=0), acc.max(axis=0), color=COLORS[method], alpha=0.12)
        ax_acc.set(title="held-out accuracy, evaluation mode", ylabel="accuracy (%)")
        ax_gap.set(title="train/eval gap (+0.001 so that 0 shows)", yscale="log",
                   ylabel="mean |logits train - logits eval| / std")
        for ax in (ax_acc, ax_gap):
            ax.set_xscale("log", base=2)
            ax.set_xticks(b, [str(v) for v in b])
            ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
            ax.invert_xaxis()
            ax.set_xlabel("b: samples per batch statistic (per worker)")
        ax_acc.legend(loc="lower left", fontsize="small")
        spread = f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"
        fig.suptitle(f"MLP width {WIDTH} at a budget of {result['budget']} samples, SGD lr {result['lr']:g} x "
                     f"batch / 32 ({spread});\nGhost BN and SyncBatchNorm step with batches of 32, the others with "
                     "batches of b")
        return [_plot.save(fig, outdir, NAME)]
