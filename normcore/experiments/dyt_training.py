"""DyT in place of LayerNorm (Zhu, Chen, He, LeCun and Liu, "Transformers without Normalization",
CVPR 2025): it trains, a step behind, and too large an alpha_init stalls it.

DyT(x) = gamma * tanh(alpha * x) + beta replaces each norm of a Transformer with an element-wise
squashing, with no mean and no variance; alpha is one learnable scalar per layer, started at
alpha_init (0.5 by default). The paper trains its models with DyT in place of LayerNorm at the
same hyper-parameters and matches LayerNorm's results, and reports that alpha_init matters more
as models grow: too large a value makes training unstable or diverge, larger models need a
smaller one, and in its language-model sweep the best value depended mostly on the width, little
on the depth.

Configuration: a Pre-LN TinyTransformer (d_model 32, 4 heads, float32) on the labelling task of
the other Transformer experiments (16 tokens from 16 symbols, each labelled by a fixed random
table of the token and its predecessor, 16 labels, every position scored; chance loss ln 16),
Adam at lr = 1e-2, batches of 16, 300 steps, the same for every norm. The learning rate was
chosen by a sweep over {1e-3, 3e-3, 1e-2, 3e-2} at 4 blocks, one initialisation, 300 steps:
1e-2 gave the lowest final loss for each of LayerNorm, RMSNorm and DyT. The "final loss" is the
training loss averaged over the last 20 steps; every batch is fresh, so it is not a memorised
training set. TinyTransformer has no alpha_init argument: the sweep sets every DyT's alpha
(those of the blocks and the final norm) after construction (``set_alpha_init``).

Measured: (1) at 4 blocks, the training curves of LayerNorm, RMSNorm and DyT (alpha_init 0.5)
from three initialisations, their median and range; (2) DyT's final loss against alpha_init on
a log grid from 0.03 to 5, at 2 and 8 blocks, beside LayerNorm's at the same depth.

What this toy scale shows (full run, medians of three initialisations):

    4 blocks, alpha_init 0.5   all three norms go from the chance loss 2.77 to below 0.004 in
                               300 steps; LayerNorm ends at 0.0007, RMSNorm at 0.0006, DyT at
                               0.0033 (range 0.0030-0.0039): DyT is about 5 times higher from
                               every initialisation and reaches a loss of 0.5 about 20 steps later.
    2 blocks                   DyT trains for alpha_init 0.03 to 2 (final loss 0.002 to 0.03;
                               LayerNorm 0.0009) and stays near chance at 5 (2.4).
    8 blocks                   DyT trains for alpha_init 0.03 to 0.5 (0.024 to 0.047, some 18 to
                               36 times LayerNorm's 0.0013) and stays at or near chance from 1 up
                               (2.3 at 1, one of three initialisations reaching 1.25; 2.76 at 2 and 5).

So the failure at too large an alpha_init reproduces, here as a loss that stays at chance (no
NaN, no blow-up), and the largest alpha_init that trains is 2 at 2 blocks and 0.5 at 8: at 8
blocks the default is the largest value of the grid that still trains. Both depths share the
learning rate chosen at 4 blocks from one initialisation, so this does not separate depth from
how well that one rate suits each depth. Small values never failed, down to 0.03. What does not
reproduce at this scale is the paper's match: with the learning rate and the step budget shared,
DyT trains but ends behind LayerNorm, a little at 2 blocks (inside LayerNorm's spread across
initialisations) and clearly at 4 and 8 blocks.

What not to conclude: that alpha_init must shrink with depth, here or in general. The paper
found depth to matter little in its language models (width mattered); here the model is 32 wide
at every depth and depth is the only architectural thing varied, but at one learning rate tuned
at 4 blocks on one initialisation (not at 2 or 8), on one synthetic task, for 300 steps; with a
longer budget, or a learning rate tuned for DyT alone, the gap to LayerNorm may close. Nor
anything about DyT's speed per step in wall time (not measured here), nor about models a million
times larger.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from ..nn import TinyTransformer
from ..norms import DyT
from ..optim import Adam
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import D_MODEL, N_HEADS, labelling_task
from .warmup import smooth

NAME = "dyt_training"
TITLE = N_("DyT in place of LayerNorm: it trains, a step behind, and too large an alpha_init stalls it")
TAKEAWAY = ("At the same Adam learning rate a 4-block Pre-LN Transformer trains with DyT (alpha_init 0.5) as "
            "with LayerNorm or RMSNorm, but ends about 5 times higher in loss (0.003 against 0.0007) from each "
            "of three initialisations; too large an alpha_init leaves DyT at the chance loss: at that learning "
            "rate, chosen at 4 blocks from one initialisation, the largest that trains is 2 at 2 blocks and 0.5 "
            "at 8 blocks, where even the best DyT ends about 18 times above LayerNorm; whether depth itself lowers "
            "that limit or the rate suits 8 blocks worse is not tested. The paper's match with LayerNorm does "
            "not reproduce at this toy scale.")

NORMS = ("layernorm", "rmsnorm", "dyt")
LR = 1e-2
BATCH_SIZE = 16
CURVE_DEPTH = 4
DEPTHS = (2, 8)
DEFAULT_ALPHA = 0.5
FINAL_WINDOW = 20


def set_alpha_init(model, alpha_init):
    """Start every DyT of ``model`` at alpha = ``alpha_init`` (its alpha_init is set to match)."""
    for _, module in model.named_modules():
        if isinstance(module, DyT):
            module.alpha.data[...] = alpha_init
            module.alpha_init = float(alpha_init)
    return model


def build(norm, n_layers, seed, alpha_init=DEFAULT_ALPHA):
    """The Pre-LN TinyTransformer with ``norm`` everywhere (``alpha_init`` is used by DyT only)."""
    task = labelling_task()
    model = TinyTransformer(task.vocab_size, D_MODEL, n_layers, N_HEADS, task.seq_len, norm=norm,
                            position="pre", rng=seed, dtype=np.float32)
    return set_alpha_init(model, alpha_init)


@single_thread()
def train(norm, n_layers, seed, steps, alpha_init=DEFAULT_ALPHA):
    """Train one model from ``seed`` at the shared learning rate; the loss per step, (steps,)."""
    model = build(norm, n_layers, seed, alpha_init)
    history = fit(model, labelling_task(), Adam(model.parameters(), lr=LR), steps, progress=False,
                  batch_size=BATCH_SIZE, seed=seed + 1000)
    return history["loss"]


def final_loss(loss):
    """The mean training loss of the last FINAL_WINDOW steps (over the last axis)."""
    return np.mean(np.asarray(loss)[..., -FINAL_WINDOW:], axis=-1)


def largest_training_alpha(dyt_final, alphas, chance):
    """Per depth, the largest alpha_init whose median final loss is below half the chance loss
    (NaN where none is): ``dyt_final`` (depths, alphas, seeds)."""
    trains = np.median(dyt_final, axis=-1) < 0.5 * chance  # (depths, alphas)
    return np.array([np.max(alphas[row]) if row.any() else np.nan for row in trains])


@single_thread()
def run(quick=False, seed=0, progress=None):
    """``loss`` (norms, seeds, steps): the curves at ``curve_depth`` blocks (CURVE_DEPTH; the
    quick run uses its shallower sweep depth and shares those runs); ``dyt_final`` (depths, alphas,
    seeds) and ``layernorm_final`` (depths, seeds): the final losses of the alpha_init sweep."""
    quick = flag(quick, "quick", "experiments.dyt_training.run")
    steps, n_seeds = (150, 1) if quick else (300, 3)
    alphas = np.array([0.1, 1.0, 4.0] if quick else [0.03, 0.1, 0.3, 0.5, 1.0, 2.0, 5.0])
    depths = (2, 6) if quick else DEPTHS
    curve_depth = depths[0] if quick else CURVE_DEPTH
    seeds = [seed + k for k in range(n_seeds)]
    jobs = ([(norm, curve_depth, DEFAULT_ALPHA) for norm in NORMS]
            + [("layernorm", depth, DEFAULT_ALPHA) for depth in depths]
            + [("dyt", depth, a) for depth in depths for a in alphas])
    jobs = list(dict.fromkeys(jobs))  # each run once: the curves' LayerNorm may be the sweep's too
    done, total = 0, len(jobs) * n_seeds
    losses = {}
    for norm, depth, a in jobs:
        for s in seeds:
            losses[norm, depth, a, s] = train(norm, depth, s, steps, a)
            done += 1
            if progress is not None:
                progress(done, total, f"{norm} {depth} blocks alpha_init={a:g} seed {s}")
    curves = np.array([[losses[norm, curve_depth, DEFAULT_ALPHA, s] for s in seeds] for norm in NORMS])
    layernorm = np.array([[losses["layernorm", d, DEFAULT_ALPHA, s] for s in seeds] for d in depths])
    dyt = np.array([[[losses["dyt", d, a, s] for s in seeds] for a in alphas] for d in depths])
    chance = math.log(labelling_task().n_labels)
    return {"norms": np.array(NORMS), "seeds": np.array(seeds), "loss": curves, "final": final_loss(curves),
            "depths": np.array(depths), "alphas": alphas, "dyt_final": final_loss(dyt),
            "layernorm_final": final_loss(layernorm), "chance_loss": chance,
            "largest_training_alpha": largest_training_alpha(final_loss(dyt), alphas, chance),
            "curve_depth": curve_depth, "lr": LR, "steps": steps, "default_alpha": DEFAULT_ALPHA}


def _band(ax, x, runs, name, label, **kw):
    """Median of ``runs`` (seeds, len(x)) as a line in ``name``'s style, their range as a band."""
    if len(runs) > 1:
        ax.fill_between(x, runs.min(axis=0), runs.max(axis=0), color=_plot.COLORS[name], alpha=0.2)
    ax.plot(x, np.median(runs, axis=0), **_plot.series(name), label=label, **kw)


def _spread(result):
    n = len(result["seeds"])
    return f"median and range of {n} seeds" if n > 1 else "one seed"


def _chance(ax, result):
    ax.axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5,
               label=f"chance, ln 16 = {result['chance_loss']:.2f}")


def plot_training(result, outdir):
    loss, norms = result["loss"], list(result["norms"])
    steps = np.arange(1, loss.shape[-1] + 1)
    with _plot.figure(ncols=2, size=(18, 7), width_ratios=(2, 1)) as (fig, (ax, bars)):
        for i, norm in enumerate(norms):
            curves = np.array([smooth(run) for run in loss[i]])
            label = _plot.LABELS[norm] + (f" (alpha_init {result['default_alpha']:g})" if norm == "dyt" else "")
            _band(ax, steps, curves, norm, label, markevery=(10 * (i + 1), len(steps) // 6))
        _chance(ax, result)
        ax.set(yscale="log", xlabel="training step", ylabel="training loss (cross-entropy, 10-step mean)",
               title="training curves")
        ax.legend(loc="lower left")
        final, x = result["final"], np.arange(len(norms))
        for i, norm in enumerate(norms):
            kw = _plot.series(norm)
            bars.scatter(np.full(final.shape[1], x[i]), final[i], color=kw["color"], marker=kw["marker"], s=60,
                         alpha=0.5)
            bars.errorbar(x[i], np.median(final[i]), yerr=[[np.median(final[i]) - final[i].min()],
                                                           [final[i].max() - np.median(final[i])]],
                          color=kw["color"], marker=kw["marker"], markersize=16, capsize=10, linewidth=3)
        bars.set(yscale="log", xticks=x, xticklabels=[_plot.LABELS[n] for n in norms],
                 ylabel=f"final loss (mean of last {FINAL_WINDOW} steps)", title="final loss (each seed, median)")
        bars.set_xlim(-0.6, len(norms) - 0.4)
        fig.suptitle(f"Pre-LN {result['curve_depth']}-block Transformer, labelling task, Adam lr = "
                     f"{result['lr']:g} for every norm ({_spread(result)})")
        return _plot.save(fig, outdir, NAME)


def plot_alpha(result, outdir):
    alphas, depths = result["alphas"], result["depths"]
    with _plot.figure(ncols=len(depths), size=(18, 7), sharey=True) as (fig, axes):
        for ax, d, dyt, ln in zip(axes, depths, result["dyt_final"], result["layernorm_final"]):
            _band(ax, alphas, dyt.T, "dyt", "DyT, final loss")
            ax.axhspan(ln.min(), ln.max(), color=_plot.COLORS["layernorm"], alpha=0.2)
            ax.axhline(np.median(ln), color=_plot.COLORS["layernorm"], linestyle=_plot.LINESTYLES["layernorm"],
                       label="LayerNorm, final loss")
            ax.axvline(result["default_alpha"], color=_plot.OKABE_ITO["grey"], linestyle="-.", linewidth=2,
                       label=f"default alpha_init = {result['default_alpha']:g}")
            _chance(ax, result)
            ax.set(xscale="log", yscale="log", xlabel="alpha_init (DyT's starting alpha, log scale)",
                   title=f"{d} blocks")
        axes[0].set_ylabel(f"final loss (mean of last {FINAL_WINDOW} steps)")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncols=4)
        fig.suptitle(f"DyT's alpha_init at two depths: Pre-LN Transformer, labelling task, Adam lr = "
                     f"{result['lr']:g}, {result['steps']} steps ({_spread(result)})")
        return _plot.save(fig, outdir, f"{NAME}_alpha")


def plot(result, outdir):
    return [plot_training(result, outdir), plot_alpha(result, outdir)]
