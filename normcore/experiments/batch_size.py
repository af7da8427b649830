"""Batch size (Wu & He 2018, Figure 1): BatchNorm needs large batches, GroupNorm and LayerNorm do not.

An MLP (Linear -> norm -> ReLU, twice, then a Linear head) learns the synthetic 10-class task
with batches of 32 down to 2 samples, at a fixed budget of samples seen (so a
smaller batch takes proportionally more steps) and the learning rate scaled linearly with the
batch size, as Wu & He do. We measure the held-out error in evaluation mode and, for
BatchNorm, how differently the trained network answers in training mode (this batch's
statistics) and in evaluation mode (the running statistics).

With 2 samples per batch, BatchNorm standardises every feature from just two values, so each
becomes +1 or -1: the batch statistics are noise, training is hurt, and the running statistics
used at evaluation describe a network the training never saw. GroupNorm and LayerNorm compute
their statistics within each sample, so the batch size does not enter.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, GroupNorm, LayerNorm
from ..perf.threads import single_thread
from . import _plot
from ._nn import mlp, sgd, teacher_task, train_step

NAME = "batch_size"
TITLE = N_("BatchNorm vs GroupNorm vs LayerNorm across batch sizes")  # shown as _(TITLE)
TAKEAWAY = ("At a fixed sample budget BatchNorm's error climbs as the batch shrinks to 2 and its training-mode "
            "and evaluation-mode outputs part ways; GroupNorm and LayerNorm do not depend on the batch size. "
            "At 32 samples per batch the three are level: the figure says that BatchNorm needs large enough "
            "batches, not that it is the worse norm.")

WIDTH, GROUPS = 64, 8
NORMS = {
    "batchnorm": BatchNorm1d,
    "groupnorm": lambda c: GroupNorm(GROUPS, c),
    "layernorm": LayerNorm,
}
BASE_LR, BASE_BATCH = 0.4, 32  # learning rate = BASE_LR * batch / BASE_BATCH


def train_and_measure(norm, batch, budget, data, rng):
    """Train on ``budget`` samples in batches of ``batch``; return (eval error, train-mode error,
    mode gap) on the held-out set. The mode gap is mean |logits_train - logits_eval| / std(logits_eval),
    with training-mode logits computed batch by batch at the same batch size."""
    x, y, x_test, y_test = data
    rng = np.random.default_rng(rng)
    model = mlp([x.shape[1], WIDTH, WIDTH, 10], "relu", norm, rng=rng)
    optimizer = sgd(model, BASE_LR * batch / BASE_BATCH)
    for _ in range(budget // batch):
        idx = rng.integers(0, len(x), batch)
        train_step(model, optimizer, x[idx], y[idx])
    n = len(x_test) // batch * batch
    logits_eval = model.eval()(x_test[:n])  # (n, 10), running statistics
    model.train()
    logits_train = np.concatenate([model(x_test[i:i + batch]) for i in range(0, n, batch)])  # batch statistics
    err_eval = float(np.mean(np.argmax(logits_eval, 1) != y_test[:n]))
    err_train = float(np.mean(np.argmax(logits_train, 1) != y_test[:n]))
    gap = float(np.mean(np.abs(logits_train - logits_eval)) / logits_eval.std())
    return err_eval, err_train, gap


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.batch_size.run")
    batches, budget, seeds = ((32, 8, 2), 6000, 1) if quick else ((32, 16, 8, 4, 2), 24000, 2)
    rng = np.random.default_rng([seed, 5])
    data = teacher_task(20000, rng=rng) + teacher_task(1000, rng=rng)
    result = {"batch_sizes": np.array(batches), "budget": budget}
    total = len(NORMS) * len(batches) * seeds * budget  # in samples
    done = 0
    for name, norm in NORMS.items():
        measured = np.zeros((seeds, len(batches), 3))
        for s in range(seeds):
            for j, b in enumerate(batches):
                measured[s, j] = train_and_measure(norm, b, budget, data, [seed, s])
                done += budget
                if progress:
                    progress(done, total, f"{name}, batch {b}, seed {s}")
        result[f"{name}/error"], result[f"{name}/train_mode_error"], result[f"{name}/mode_gap"] = (
            measured.mean(axis=0).T)
    return result


def plot(result, outdir):
    b = result["batch_sizes"]
    paths = []
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            ax1.plot(b, 100 * result[f"{name}/error"], **_plot.series(name), label=_plot.LABELS[name])
        ax1.set(title="Held-out error (evaluation mode)", xlabel="batch size (samples per step)",
                ylabel="error (%)")
        bn = "batchnorm"
        ax2.plot(b, 100 * result[f"{bn}/error"], **_plot.series(bn), label="BatchNorm, eval mode (running stats)")
        ax2.plot(b, 100 * result[f"{bn}/train_mode_error"], marker="s", ls="--", color=_plot.COLORS[bn],
                 label="BatchNorm, train mode (batch stats)")
        ax2.plot(b, 100 * result["groupnorm/error"], **_plot.series("groupnorm"),
                 label="GroupNorm (same in both modes)")
        ax2.set(title="BatchNorm: training vs evaluation mode", xlabel="batch size (samples per step)",
                ylabel="error (%)")
        for ax in (ax1, ax2):
            ax.set_xscale("log", base=2)
            ax.set_xticks(b, [str(v) for v in b])
            ax.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
            ax.invert_xaxis()
            ax.legend(loc="upper left")
        fig.suptitle(f"Batch size at a fixed budget of {result['budget']} samples (Wu & He 2018), "
                     f"GroupNorm: {GROUPS} groups of {WIDTH // GROUPS}")
        paths.append(_plot.save(fig, outdir, "batch_size_error"))
    return paths
