"""SyncBatchNorm: 8 workers with 2 samples each train like one worker with 16, BatchNorm alone does not.

Simulated data-parallel training: 8 workers (threads of one ``InProcessGroup``) each hold a
replica of an MLP (Linear -> norm -> ReLU, twice, then a Linear head; width 64) and draw 2
samples of the synthetic 10-class teacher task per step. Each worker's loss is the mean cross
entropy over its 2 samples; after the backward, the workers all-reduce their parameters'
gradients and divide by 8 (DDP's gradient averaging, one ``worker.all_reduce`` of the
flattened gradients), then take the same plain SGD step, so the replicas stay identical.
Three networks, the same global batch of 16 samples per step, the same learning rate:

* **BatchNorm per worker**: each replica standardises with the statistics of its own 2
  samples (every feature becomes +1 or -1). The running statistics used at evaluation are
  worker 0's, as PyTorch's DistributedDataParallel broadcasts rank 0's buffers.
* **SyncBatchNorm**: the statistics of all 16 samples, via the layer's all-reduces.
* **one worker, batch 16**: plain BatchNorm on the 16 samples, no workers at all.

Measured: the held-out accuracy in evaluation mode (running statistics) during training, and
at the end the accuracy in training mode (the statistics of the batch as the network saw it
in training: shards of 2 per worker, or 16 together) and the train/eval gap, mean |logits_train
- logits_eval| / std(logits_eval) over the held-out set. The full run trains each network from
3 initialisations (median and range); the quick run trains one for fewer steps. The learning
rate, 0.2, is the batch_size experiment's (0.4 at a batch of 32) scaled to 16, not tuned per
network; a quick check at 0.05 and 0.8 (400 steps, one seed) left the per-worker network at
32% and 20% against 70% for the other two.

Finding (full run, 1500 steps): SyncBatchNorm trains exactly like the single worker with a
batch of 16 (their logits agree to 1e-15, as they must: the global-batch statistics, with the
gradients averaged over workers, give the large batch's gradient), reaching 75% held-out
accuracy, while BatchNorm on 2 samples per worker stays near 34% from the first checkpoint on,
and its training-mode and evaluation-mode networks disagree far more (gap 0.89 against 0.24).
A batch of 16 leaves a gap too: in training mode the 16-sample network scores 67%, not 75%.

What not to conclude: that per-worker BatchNorm always fails in data-parallel training. This
toy MLP shows the small-shard regime only; with larger shards the local statistics may well be
good enough (the batch_size experiment finds BatchNorm level with GroupNorm at 32 samples per
batch), which this figure does not measure. Nor does it show
SyncBatchNorm's cost: the in-process group measures no network time.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d
from ..distributed import InProcessGroup, SyncBatchNorm
from ..nn import CrossEntropyLoss
from ..perf.threads import single_thread
from . import _plot
from ._nn import mlp, sgd, teacher_task, train_step

NAME = "sync_batchnorm"
TITLE = N_("SyncBatchNorm: 8 workers x 2 samples train like one worker with 16")  # shown as _(TITLE)
TAKEAWAY = ("With 2 samples per worker on 8 simulated workers, per-worker BatchNorm ends with a lower held-out "
            "accuracy and a large train/eval gap, while SyncBatchNorm trains exactly like one worker with a batch "
            "of 16 (same logits to rounding); a toy MLP in the small-shard regime only.")

WORKERS, PER_WORKER, WIDTH, LR = 8, 2, 64, 0.2
SIZES = [20, WIDTH, WIDTH, 10]
NETWORKS = ("per_worker", "sync", "single")
LABELS = {"per_worker": "BatchNorm per worker (8 x 2)", "sync": "SyncBatchNorm (8 x 2)",
          "single": "one worker, batch 16"}
COLORS = {"per_worker": _plot.OKABE_ITO["vermillion"], "sync": _plot.OKABE_ITO["blue"],
          "single": _plot.OKABE_ITO["black"]}
MARKERS = {"per_worker": "X", "sync": "o", "single": "s"}
LINESTYLES = {"per_worker": "-.", "sync": "-", "single": "--"}
WIDE = {"sync": {"linewidth": 8, "markersize": 16}}  # drawn under the identical single-worker curve


def data_parallel_step(worker, model, optimizer, x, labels):
    """One data-parallel SGD step on this worker's shard; returns its loss."""
    loss_fn = CrossEntropyLoss()
    loss = loss_fn(model(x), labels)
    model.backward(loss_fn.backward())
    params = model.parameters()
    grads = worker.all_reduce(np.concatenate([p.grad.ravel() for p in params])) / worker.world_size
    for p, g in zip(params, np.split(grads, np.cumsum([p.size for p in params])[:-1])):
        p.grad[...] = g.reshape(p.shape)                      # every worker: the mean gradient
    optimizer.step()
    optimizer.zero_grad()
    return float(loss)


class Network:
    """One of the three networks: ``replicas`` (one per worker, or one model) and how it trains."""

    def __init__(self, kind, seed):
        self.kind = kind
        self.group = InProcessGroup(WORKERS) if kind != "single" else None
        norms = {"per_worker": lambda w: BatchNorm1d, "sync": lambda w: (lambda c: SyncBatchNorm(c, process_group=w)),
                 "single": lambda w: BatchNorm1d}[kind]
        workers = self.group.workers if self.group else [None]
        self.replicas = [mlp(SIZES, "relu", norms(w), rng=np.random.default_rng(seed))
                         for w in workers]                          # identical initialisations
        self.optimizers = [sgd(m, LR) for m in self.replicas]

    def step(self, x, labels):
        """One step on a global batch of 16: 8 shards of 2, or all 16 on the single worker."""
        if self.group is None:
            return train_step(self.replicas[0], self.optimizers[0], x, labels)
        shards = np.split(np.arange(len(x)), WORKERS)
        losses = self.group.run(lambda w, i: data_parallel_step(w, self.replicas[w.rank], self.optimizers[w.rank],
                                                                 x[i], labels[i]), shards)
        return float(np.mean(losses))

    def eval_logits(self, x):
        """Evaluation mode (worker 0's running statistics; no communication)."""
        model = self.replicas[0].eval()
        logits = model(x)
        model.train()
        return logits

    def train_mode_logits(self, x):
        """Training mode, batch by batch as in training (global batches of 16). Updates the
        running statistics: call it last."""
        batches = np.split(x, len(x) // (WORKERS * PER_WORKER))
        if self.group is None:
            return np.concatenate([self.replicas[0](b) for b in batches])
        return np.concatenate([np.concatenate(self.group.run(lambda w, s: self.replicas[w.rank](s),
                                                             np.split(b, WORKERS))) for b in batches])


def train_and_measure(kind, steps, every, data, seed):
    """Train network ``kind`` from initialisation ``seed``; the held-out accuracy every ``every``
    steps, and at the end the eval-mode and train-mode accuracies, the gap and the eval logits."""
    x, y, x_test, y_test = data
    net = Network(kind, seed)
    batch_rng = np.random.default_rng([seed, 77])             # the same batches for the three networks
    curve = []
    for t in range(steps):
        idx = batch_rng.integers(0, len(x), WORKERS * PER_WORKER)
        net.step(x[idx], y[idx])
        if (t + 1) % every == 0:
            curve.append(np.mean(np.argmax(net.eval_logits(x_test), 1) == y_test))
    logits_eval = net.eval_logits(x_test)
    logits_train = net.train_mode_logits(x_test)
    return {"curve": np.array(curve),
            "eval_accuracy": np.mean(np.argmax(logits_eval, 1) == y_test),
            "train_mode_accuracy": np.mean(np.argmax(logits_train, 1) == y_test),
            "gap": np.mean(np.abs(logits_train - logits_eval)) / logits_eval.std(),
            "logits": logits_eval}


def task_data(seed):
    """(x, y, x_test, y_test): 20,000 training and 2,000 held-out samples of the teacher task."""
    rng = np.random.default_rng([seed, 20])
    return teacher_task(20000, rng=rng) + teacher_task(2000, rng=rng)


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.sync_batchnorm.run")
    steps, every, seeds = (400, 50, 1) if quick else (1500, 100, 3)
    data = task_data(seed)
    result = {"steps": np.arange(every, steps + 1, every), "workers": WORKERS, "per_worker": PER_WORKER,
              "seeds": seeds, "lr": LR}
    logits = {}
    for i, kind in enumerate(NETWORKS):
        runs = []
        for s in range(seeds):
            runs.append(train_and_measure(kind, steps, every, data, [seed, s]))
            if progress:
                progress(i * seeds + s + 1, len(NETWORKS) * seeds, f"{kind}, seed {s}")
        for key in ("curve", "eval_accuracy", "train_mode_accuracy", "gap"):
            result[f"{kind}/{key}"] = np.array([r[key] for r in runs])   # (seeds, ...) one row per seed
        logits[kind] = np.array([r["logits"] for r in runs])
    scale = np.abs(logits["single"]).max()
    result["sync_vs_single_logit_difference"] = np.abs(logits["sync"] - logits["single"]).max() / scale
    return result


def median_range(a):
    return np.median(a, axis=0), np.min(a, axis=0), np.max(a, axis=0)


def plot(result, outdir):
    with _plot.figure(ncols=2, size=(18, 7)) as (fig, (ax1, ax2)):
        for kind in NETWORKS:  # SyncBatchNorm drawn wide and under the single worker's dashed line: they coincide
            style = _plot.series(kind, COLORS, MARKERS, LINESTYLES, **WIDE.get(kind, {}))
            mid, lo, hi = median_range(100 * result[f"{kind}/curve"])
            ax1.plot(result["steps"], mid, **style, label=LABELS[kind], markevery=max(1, len(mid) // 8))
            ax1.fill_between(result["steps"], lo, hi, color=COLORS[kind], alpha=0.2)
        ax1.set(title="Held-out accuracy, evaluation mode", xlabel="training step (16 samples per step)",
                ylabel="accuracy (%)")
        ax1.annotate(f"SyncBatchNorm = one worker:\nlogits differ by "
                     f"{result['sync_vs_single_logit_difference']:.0e} (relative)", (0.5, 0.3),
                     xycoords="axes fraction", ha="center", fontsize=15)
        ax1.legend(loc="center")
        x = np.arange(len(NETWORKS))
        for j, (key, name, hatch) in enumerate((("eval_accuracy", "evaluation mode (running stats)", ""),
                                                 ("train_mode_accuracy", "training mode (batch stats)", "//"))):
            mid, lo, hi = median_range(100 * np.array([result[f"{k}/{key}"] for k in NETWORKS]).T)
            ax2.bar(x + (j - 0.5) * 0.38, mid, 0.38, yerr=[mid - lo, hi - mid], capsize=6, hatch=hatch,
                    color=[COLORS[k] for k in NETWORKS], edgecolor=_plot.OKABE_ITO["black"], alpha=0.85 - 0.4 * j,
                    label=name)
        for i, kind in enumerate(NETWORKS):
            gap = np.median(result[f"{kind}/gap"])
            ax2.annotate(f"gap {gap:.2f}", (i, 5), ha="center", fontsize=15,
                         bbox={"facecolor": "white", "edgecolor": COLORS[kind]})
        ax2.set_xticks(x, [LABELS[k].replace(" (", "\n(").replace(", ", ",\n") for k in NETWORKS])
        ax2.set(title="End of training: evaluation vs training mode", ylabel="held-out accuracy (%)",
                ylim=(0, 100))
        ax2.legend(loc="upper left")
        fig.suptitle(f"{result['workers']} simulated workers x {result['per_worker']} samples, gradients averaged; "
                     f"MLP width {WIDTH}, SGD lr {result['lr']}; median and range of {result['seeds']} seeds\n"
                     f"gap: mean |logits in training mode - logits in evaluation mode| / std(logits)")
        return [_plot.save(fig, outdir, NAME)]
