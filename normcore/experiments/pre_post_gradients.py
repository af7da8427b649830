"""Gradients at initialisation, Pre-LN vs Post-LN vs DeepNorm (Xiong et al., 2020).

Xiong et al. bound the gradient of a Post-LN Transformer's last layer at initialisation by a
constant that does not depend on the depth L, and a Pre-LN Transformer's by one that shrinks
like O(sqrt(1/L)): Pre-LN's residual stream x_L is a sum of L branch outputs, |x_L| grows like
sqrt(L), and the final LayerNorm divides the gradient by |x_L|. These are upper bounds: they
say Post-LN's last layer keeps large gradients however deep the model, not that they grow.

Measured here, with one forward and backward of the cross-entropy loss at initialisation
(TinyTransformer, d_model 32, 4 heads, float64, a ReLU feed-forward as in the Transformer Xiong
et al. analyse, a labelling task scored at all 16 positions, batches of 16), averaged over
random initialisations:

    by layer   the gradient norm of every block of a 12-block model
    by depth   the gradient norm of the last block for L = 1, 2, 4, ... blocks, on log-log axes
               beside the theory's slope -1/2 for Pre-LN

What this toy scale shows: near the output Post-LN's gradients are several times Pre-LN's. On
average over initialisations they rise toward the output (the top quarter of the blocks gets
about 1.3 times the bottom quarter's), but the interquartile bands of the first and the last
block overlap: a single initialisation can go either way, and the figure does not show a
gradient that grows toward the output in every model. Post-LN's last-block gradient does not
shrink with depth; here it rises from 1 to 8 blocks, which the bound neither predicts nor
forbids. Pre-LN's last-block gradient shrinks with depth, with a log-log slope of about -0.3
between 8 and 64 blocks, shallower than the theory's -1/2 (nothing here shows it reaching
-1/2; the unit-variance embeddings still make up much of the stream at these depths). Pre-LN's
profile is not quite flat: it falls gently toward the output, because lower blocks also
receive the gradient through every later block's branch. DeepNorm's profile is flat.

The feed-forward matters at this scale: with normcore's default GELU instead of ReLU, Post-LN's
profile rises less and less reliably across initialisations (its top quarter gets about 1.0 to
1.3 times the bottom quarter's, depending on the set of initialisations).
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from ..perf.threads import single_thread
from . import _plot
from ._positions import (COLORS, LABELS, LINESTYLES, MARKERS, POSITIONS, block_grad_norms, labelling_task,
                         loglog_slope, tiny_model)

NAME = "pre_post_gradients"
TITLE = N_("Gradient norms at initialisation: Post-LN, Pre-LN, DeepNorm")  # shown as _(TITLE)
TAKEAWAY = ("At initialisation Post-LN's gradients are several times Pre-LN's near the output; on average "
            "they grow toward the output, but inside overlapping bands (one initialisation can go either way), "
            "and its last block's does not shrink with depth. Pre-LN's last-block gradient shrinks with depth, "
            "with a log-log slope of about -0.3 here, shallower than the -1/2 of Xiong et al.'s O(1/sqrt(L)) "
            "bound.")

PROFILE_LAYERS = 12
ACTIVATION = "relu"  # the feed-forward of the Transformer Xiong et al. analyse
BATCH_SIZE = 16


def gradients_at_init(position, n_layers, seed):
    """The gradient norm of every block (n_layers,) of a freshly initialised model on one batch."""
    task = labelling_task()
    tokens, targets = task.batch(BATCH_SIZE, seed + 500)
    model = tiny_model(task, position, n_layers, seed, activation=ACTIVATION)
    return block_grad_norms(model, tokens, targets)


def top_to_bottom(profile):
    """Mean gradient norm of the top quarter of the blocks over that of the bottom quarter."""
    k = max(1, len(profile) // 4)
    return float(np.mean(profile[-k:]) / np.mean(profile[:k]))


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.pre_post_gradients.run")
    n_profile_seeds, n_depth_seeds = (16, 3) if quick else (32, 8)
    depths = np.array([1, 2, 4, 8, 16, 32] if quick else [1, 2, 4, 8, 16, 32, 64])
    by_layer = np.zeros((len(POSITIONS), n_profile_seeds, PROFILE_LAYERS))
    last_block = np.zeros((len(POSITIONS), len(depths), n_depth_seeds))
    total = len(POSITIONS) * (n_profile_seeds * PROFILE_LAYERS + n_depth_seeds * int(depths.sum()))
    done = 0
    for i, position in enumerate(POSITIONS):
        for k in range(n_profile_seeds):
            by_layer[i, k] = gradients_at_init(position, PROFILE_LAYERS, seed * 1000 + k)
            done += PROFILE_LAYERS
            if progress is not None:
                progress(done, total, f"{position} by layer, seed {k}")
        for j, depth in enumerate(depths):
            for k in range(n_depth_seeds):
                last_block[i, j, k] = gradients_at_init(position, depth, seed * 1000 + k)[-1]
            done += n_depth_seeds * depth
            if progress is not None:
                progress(done, total, f"{position} L={depth}")
    last_mean = last_block.mean(axis=2)
    return {
        "positions": np.array(POSITIONS), "layer": np.arange(1, PROFILE_LAYERS + 1), "depths": depths,
        "by_layer": by_layer, "by_layer_mean": by_layer.mean(axis=1),  # (positions, layers)
        "last_block": last_block, "last_block_mean": last_mean,  # (positions, depths)
        # the exponent p of last-block gradient ~ L**p over the deeper half of the depths
        "last_block_slope": np.array([loglog_slope(depths[len(depths) // 2:], m[len(depths) // 2:])
                                      for m in last_mean]),
        "top_to_bottom": np.array([top_to_bottom(m) for m in by_layer.mean(axis=1)]),
        "n_profile_seeds": n_profile_seeds, "n_depth_seeds": n_depth_seeds, "activation": ACTIVATION,
    }

def plot(result, outdir):
    positions = list(result["positions"])
    with _plot.figure(ncols=2, size=(19, 7)) as (fig, (ax_l, ax_d)):
        layer, depths = result["layer"], result["depths"]
        for i, position in enumerate(positions):
            color, label = COLORS[position], LABELS[position]
            runs = result["by_layer"][i]
            ax_l.fill_between(layer, *np.percentile(runs, [25, 75], axis=0), color=color, alpha=0.15)
            style = _plot.series(position, COLORS, MARKERS, LINESTYLES)
            ax_l.plot(layer, result["by_layer_mean"][i], **style, label=label)
            runs = result["last_block"][i]
            ax_d.fill_between(depths, *np.percentile(runs, [25, 75], axis=1), color=color, alpha=0.15)
            slope = f"slope {result['last_block_slope'][i]:+.2f} over L >= {depths[len(depths) // 2]}"
            ax_d.plot(depths, result["last_block_mean"][i], **style, label=f"{label} ({slope})")
        pre = positions.index("pre")
        anchor = result["last_block_mean"][pre][-1] * np.sqrt(depths[-1])
        ax_d.plot(depths, anchor / np.sqrt(depths), color="black", linestyle=":", linewidth=2.5,
                  label=r"Pre-LN bound's rate $O(\sqrt{1/L})$, slope $-1/2$")
        ax_l.set(xlabel="block (1 = next to the input)", ylabel="gradient norm of the block's parameters",
                 title=f"By layer, {len(layer)}-block model", ylim=(0, None), xticks=layer)
        ax_d.set(xscale="log", yscale="log", xlabel="number of blocks L",
                 ylabel="gradient norm of the last block", title="Last block against depth (log-log)")
        ax_d.set_xticks(depths, [str(d) for d in depths])
        ticks = [0.1, 0.2, 0.5, 1, 2, 5, 10]
        ax_d.set_yticks(ticks, [f"{t:g}" for t in ticks])
        ax_d.set_yticks([], minor=True)
        ax_l.set_ylim(0, 1.25 * ax_l.get_ylim()[1])  # room for the legend above the bands
        ax_l.legend(loc="upper left", ncol=3)
        ax_d.set_ylim(0.12 * result["last_block_mean"].min(), 2 * result["last_block_mean"].max())
        ax_d.legend(loc="lower left")
        fig.suptitle(f"Gradients at initialisation, {result['activation']} feed-forward (mean and "
                     f"interquartile range of {result['n_profile_seeds']} and {result['n_depth_seeds']} "
                     "initialisations);\nbands that overlap mean single initialisations can differ in order")
        return [_plot.save(fig, outdir, NAME)]
