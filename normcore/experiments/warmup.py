"""Learning-rate warmup (Xiong et al., 2020): one depth and one learning rate where Post-LN fails
without it and Pre-LN and DeepNorm do not.

Xiong et al. show that at initialisation a Post-LN Transformer's gradients are largest near the
output, so full-size Adam steps from step 0 throw it off, while warmup (a learning rate ramped
up from near zero) lets it train; Pre-LN trains at the same learning rate without warmup.

Configuration (found by a sweep; it holds across seeds): a 12-block TinyTransformer (d_model 32,
4 heads, float32) on the copy task (8 symbols from 10, repeated after a separator), Adam at lr =
2e-3, batches of 16, with a constant learning rate or a linear warmup over the first quarter of
the steps. With 12 blocks at this rate Post-LN without warmup stays at the chance loss ln(10)
(it predicts the uniform distribution), while Pre-LN and DeepNorm learn the task with or without
warmup, and Post-LN with warmup learns too. Only this depth and this rate are run: the
experiment shows a case where Post-LN needs warmup, not at what depth or learning rate the need
begins. The full run trains each case from three initialisations and draws their median and
range, as a single run is noisy; the quick run trains one.

What not to conclude: that Post-LN needs warmup only when deep, or at every depth (one depth
was run), nor that Pre-LN never needs warmup. This is one toy task at one depth and one learning
rate; Pre-LN models trained at scale (GPT-3, LLaMA) still use a warmup.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import tasks
from ..optim import Adam, constant, linear_warmup
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import COLORS, LABELS, LINESTYLES, MARKERS, POSITIONS, tiny_model

NAME = "warmup"
# shown as _(TITLE)
TITLE = N_("Warmup, 12 blocks at one learning rate: Post-LN stalls without it, Pre-LN and DeepNorm do not")
TAKEAWAY = ("At one Adam learning rate (2e-3) a 12-block Post-LN Transformer without warmup stays at "
            "the chance loss from each of three initialisations, while with warmup it learns, and Pre-LN and "
            "DeepNorm learn either way. One toy task at one depth and one learning rate: it does not say at "
            "what depth or rate Post-LN starts to need warmup, nor that Pre-LN never needs it (GPT-3 and "
            "LLaMA, both Pre-LN, use one).")

N_LAYERS = 12
LR = 2e-3
BATCH_SIZE = 16
WARMUP_FRACTION = 0.25


def copy_task():
    return tasks.CopyTask(n_tokens=8, n_symbols=10)


@single_thread()
def train(position, steps, warmup, seed):
    """Train one model from ``seed``; ``warmup`` steps of linear warmup (0: none). Returns fit's history."""
    task = copy_task()
    model = tiny_model(task, position, N_LAYERS, seed, dtype=np.float32)
    optimizer = Adam(model.parameters(), lr=LR)
    schedule = linear_warmup(LR, warmup) if warmup else constant(LR)
    return fit(model, task, optimizer, steps, schedule=schedule, progress=False, batch_size=BATCH_SIZE,
               seed=seed + 1000)


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train every position with and without warmup from ``n_seeds`` initialisations (seed,
    seed + 1, ...); ``loss`` and ``accuracy`` are (positions, warmups, seeds, steps)."""
    quick = flag(quick, "quick", "experiments.warmup.run")
    steps, n_seeds = (100, 1) if quick else (400, 3)
    warmups = (0, int(WARMUP_FRACTION * steps))
    seeds = [seed + k for k in range(n_seeds)]
    loss = np.zeros((len(POSITIONS), len(warmups), n_seeds, steps))
    accuracy = np.zeros_like(loss)
    lr = np.zeros((len(warmups), steps))
    total, done = loss[..., 0].size, 0
    for i, position in enumerate(POSITIONS):
        for j, warmup in enumerate(warmups):
            for k, s in enumerate(seeds):
                history = train(position, steps, warmup, s)
                loss[i, j, k], accuracy[i, j, k], lr[j] = history["loss"], history["accuracy"], history["lr"]
                done += 1
                if progress is not None:
                    progress(done, total, f"{position} warmup={warmup} seed {s}")
    return {"positions": np.array(POSITIONS), "warmup_steps": np.array(warmups), "seeds": np.array(seeds),
            "loss": loss, "accuracy": accuracy, "lr": lr, "chance_loss": math.log(copy_task().n_symbols),
            "n_layers": N_LAYERS, "peak_lr": LR}


def smooth(y, window=10):
    """Running mean of y over the last ``window`` steps (fewer at the start)."""
    total = np.cumsum(np.insert(y, 0, 0.0))  # total[k] = y[0] + ... + y[k - 1]
    end = np.arange(1, len(y) + 1)
    start = np.maximum(end - window, 0)
    return (total[end] - total[start]) / (end - start)


def plot(result, outdir):
    steps = np.arange(1, result["loss"].shape[-1] + 1)
    n_seeds = result["loss"].shape[2]
    with _plot.figure(ncols=2, size=(18, 7), sharey=True) as (fig, axes):
        for j, (ax, warmup) in enumerate(zip(axes, result["warmup_steps"])):
            for i, position in enumerate(result["positions"]):
                curves = np.array([smooth(run) for run in result["loss"][i, j]])  # (seeds, steps)
                color = COLORS[position]
                if n_seeds > 1:
                    ax.fill_between(steps, curves.min(axis=0), curves.max(axis=0), color=color, alpha=0.2)
                ax.plot(steps, np.median(curves, axis=0), **_plot.series(position, COLORS, MARKERS, LINESTYLES),
                        markevery=(10 * (i + 1), len(steps) // 5), label=LABELS[position])
            ax.axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5,
                       label=f"chance, ln(10) = {result['chance_loss']:.2f}")
            if warmup:
                ax.axvspan(0, warmup, color=_plot.OKABE_ITO["yellow"], alpha=0.25, label=f"warmup ({warmup} steps)")
            ax.set(xlabel="training step", title=(f"linear warmup over {warmup} steps" if warmup
                                                  else "no warmup (constant learning rate)"))
        axes[0].legend(loc="center right")  # the curves, once
        axes[1].legend(handles=axes[1].patches, loc="upper right")  # the warmup span
        axes[0].set_ylabel("training loss (cross-entropy, 10-step mean)")
        spread = (f"median and range of {n_seeds} initialisations" if n_seeds > 1 else "one initialisation")
        fig.suptitle(f"{result['n_layers']}-block Transformer on the copy task, Adam lr = {result['peak_lr']:g} "
                     f"({spread})")
        return [_plot.save(fig, outdir, NAME)]
