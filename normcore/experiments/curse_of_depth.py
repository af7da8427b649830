"""The curse of depth: how much each block of a trained Transformer still does, for six norm
placements at two depths.

Sun et al. 2025 ("The Curse of Depth in Large Language Models") argue that in Pre-LN the
residual stream's variance grows with depth, so that a deep block's branch adds little to the
stream, its Jacobian approaches the identity and removing it barely changes the loss; they
propose LayerNorm Scaling (each norm's output times 1/sqrt(l), l the block's 1-based index).
Mix-LN (Li et al. 2024) puts Post-LN in the first blocks and Pre-LN in the rest. The placements
(``_positions``): Post-LN, Pre-LN, Peri-LN, reordered (OLMo 2: x + LN(F(x))), LayerNorm Scaling
and Mix-LN (a quarter of the blocks Post-LN).

Each is a TinyTransformer (d_model 32, 4 heads, float32) trained on the copy task (8 symbols
from 10) with Adam at a constant lr 3e-3, batches of 16, the same steps and seeds for all; then,
on one fixed probe batch, for each block l with input x and output y = block(x):

    moves the stream     ||y - x|| / ||x||              (over the whole batch)
    Jacobian vs identity ||(J - I) u|| / ||u||          u ~ N(0, I) of the input's shape, J^T u
                                                        from the block's own backward; its mean
                                                        square over u is ||J - I||_F^2 / n, so
                                                        0 means the block is the identity
    loss without it      the probe loss with block l skipped (y replaced by x), minus the full loss
    stream's RMS         the RMS of x_0 (the embeddings), x_1, ..., x_L

What the full run shows (200 steps, seeds 0 and 1; every placement but Post-LN at 8 blocks ends
below a loss of 0.07, Post-LN at 8 blocks at 1.8 and 2.0, still learning):

    Pre-LN, 8 blocks    the stream's RMS grows from 1.4 to 5.2 and 6.1 (about 2.6 and 3.2 at
                        initialisation), by a similar step per block rather than a growing one;
                        ||J - I|| / sqrt(n) falls from 0.75-1.7 in block 1 to 0.17-0.28 in block 8;
                        without any one of blocks 4-8 the loss rises by at most 0.007, without
                        block 1 by 0.7 and 4.1.
    Peri-LN, reordered  alike: deep blocks removable (at most 0.04 each from block 4 on), though
                        the reordered blocks' Jacobians stay further from I (0.4-0.8).
    Mix-LN              its two Post-LN blocks move the stream and matter; its Pre-LN blocks from
                        block 4 on are removable (at most 0.005 each).
    LayerNorm Scaling   the deep blocks are nearer the identity than Pre-LN's, at initialisation
                        (0.11-0.12 against 0.25-0.32 in block 8) and after training (0.08-0.09),
                        and from block 3 on each is removable (at most 0.002): here it does not
                        make the deep blocks contribute more, which is what it is meant to do.
    Post-LN             every block moves the stream by about as much (0.67-0.84 of its size)
                        and stays far from I (0.74-0.97); at 4 blocks, where it trains, removing
                        any block costs 0.1 to 3.7. Removing a Post-LN block removes a norm too.

What not to conclude: that deep Pre-LN blocks are useless in general (this task is solved by a
few blocks, so any placement may leave the rest idle; the only placement whose deep blocks stay
busy, Post-LN, has not learned the task at 8 blocks), that LayerNorm
Scaling fails at the paper's scale (its claim is about LLM pre-training, 130M to 7B parameters),
or that the variance grows exponentially (it grows steadily here, over 8 blocks). One toy task,
depths of 4 and 8, 200 steps.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from ..nn import CrossEntropyLoss
from ..optim import Adam
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import COLORS, LABELS, LINESTYLES, MARKERS, residual_stream, tiny_model
from .warmup import copy_task

NAME = "curse_of_depth"
TITLE = N_("The curse of depth: how much each block of a trained Transformer does, by norm placement")  # _(TITLE)
TAKEAWAY = ("Trained on the copy task (200 Adam steps, 2 seeds), an 8-block Pre-LN Transformer's stream grows "
            "about 4-fold over its depth (steadily, not exponentially), its deep blocks' Jacobians come near the "
            "identity (||J - I|| / sqrt(n) 0.17-0.28 in block 8) and removing any of blocks 4-8 raises the loss by at "
            "most 0.007, as the curse of depth describes; Peri-LN, reordered and Mix-LN's Pre-LN blocks behave alike. "
            "LayerNorm Scaling brings the deep blocks nearer the identity still (0.08-0.09), the opposite of its "
            "aim, at this scale. Post-LN's blocks stay far from the identity, but at 8 blocks it does not train "
            "in this budget. One easy task, which a few blocks solve.")

PLACEMENTS = ("post", "pre", "peri", "reordered", "lns", "mix")
LR = 3e-3
BATCH_SIZE = 16
PROBE_BATCH = 32
PROBE_SEED = 12345
N_DIRECTIONS = 3  # random directions u per block for the Jacobian's distance from the identity


def relative_norm(a, b):
    """||a|| / ||b|| over every entry, in float64."""
    return float(np.linalg.norm(np.asarray(a, np.float64)) / np.linalg.norm(np.asarray(b, np.float64)))


def jacobian_distance(block, x, rng, n_directions=N_DIRECTIONS):
    """An estimate of ||J - I||_F / sqrt(n) for the block's Jacobian J at x (n = x.size): the root
    mean square over random u ~ N(0, I) of ||J^T u - u|| / ||u||, J^T u from the block's backward."""
    block(x)
    squares = []
    for _ in range(n_directions):
        u = rng.standard_normal(x.shape).astype(x.dtype)
        squares.append(relative_norm(block.backward(u) - u, u) ** 2)
    block.zero_grad()
    return float(np.sqrt(np.mean(squares)))


def head_loss(model, x, targets):
    """The cross-entropy loss of the model's stages after its blocks (final norm, head, soft-cap)
    on the residual stream x leaving the last block."""
    for m in (getattr(model, "norm_f", None), model.head, getattr(model, "logit_cap", None)):
        if m is not None:
            x = m(x)
    return float(CrossEntropyLoss()(x.reshape(-1, x.shape[-1]), targets.reshape(-1)))


def loss_without(model, tokens, targets, skip):
    """The probe loss with block ``skip`` (0-based) left out: its input passed on unchanged."""
    x = model.pos_emb(model.tok_emb(tokens))  # (B, T, C)
    for i, block in enumerate(model.blocks):
        if i != skip:
            x = block(x)
    return head_loss(model, x, targets)


def probe(model, rng):
    """Per block (L,): how far it moves the stream, its Jacobian's distance from the identity, the
    loss increase without it; the stream's RMS (L + 1,); and the full probe loss."""
    model.eval()
    tokens, targets = copy_task().batch(PROBE_BATCH, PROBE_SEED)
    xs = list(residual_stream(model, tokens))
    full = head_loss(model, xs[-1], targets)
    moves = [relative_norm(y - x, x) for x, y in zip(xs[:-1], xs[1:])]
    jacobian = [jacobian_distance(block, x, rng) for block, x in zip(model.blocks, xs[:-1])]
    removed = [loss_without(model, tokens, targets, i) - full for i in range(len(model.blocks))]
    rms = [float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) for x in xs]
    return np.array(moves), np.array(jacobian), np.array(removed), np.array(rms), full


@single_thread()
def train(placement, n_layers, steps, seed):
    """Train one model and probe it; returns (fit's loss history, probe at init, probe after)."""
    task = copy_task()
    model = tiny_model(task, placement, n_layers, seed, dtype=np.float32, norm_tier="fast")
    rng = np.random.default_rng(seed + 3000)
    at_init = probe(model, rng)
    history = fit(model, task, Adam(model.parameters(), lr=LR), steps, progress=False, batch_size=BATCH_SIZE,
                  seed=seed + 1000)
    return history["loss"], at_init, probe(model, rng)


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train every placement at every depth from ``n_seeds`` initialisations. For each depth L,
    ``move_L``, ``jacobian_L`` and ``removed_L`` are (placements, seeds, 2, L), ``rms_L``
    (placements, seeds, 2, L + 1) (index 0 of the third axis at initialisation, 1 after
    training), ``loss_L`` (placements, seeds, steps) and ``probe_loss_L`` (placements, seeds, 2)."""
    quick = flag(quick, "quick", "experiments.curse_of_depth.run")
    depths, steps, n_seeds = ((3, 6), 10, 1) if quick else ((4, 8), 200, 2)
    seeds = [seed + k for k in range(n_seeds)]
    result = {"placements": np.array(PLACEMENTS), "depths": np.array(depths), "seeds": np.array(seeds),
              "steps": steps, "lr": LR}
    total, done = len(depths) * len(PLACEMENTS) * n_seeds, 0
    for depth in depths:
        runs = []
        for placement in PLACEMENTS:
            runs.append([train(placement, depth, steps, s) for s in seeds])
            done += n_seeds
            if progress is not None:
                progress(done, total, f"{placement} L={depth}")
        for key, index in (("move", 0), ("jacobian", 1), ("removed", 2), ("rms", 3), ("probe_loss", 4)):
            result[f"{key}_{depth}"] = np.array([[[at_init[index], after[index]] for _, at_init, after in row]
                                                 for row in runs])
        result[f"loss_{depth}"] = np.array([[loss for loss, _, _ in row] for row in runs])
    result["chance_loss"] = float(np.log(copy_task().n_symbols))
    return result


PANELS = (("move", "||block(x) - x|| / ||x||", "how far the block moves the stream", "log"),
          ("jacobian", "||J - I||_F / sqrt(n)", "its Jacobian's distance from I", "log"),
          ("removed", "probe loss without the block - with it", "loss when the block is removed", "symlog"),
          ("rms", "RMS of x_l (0 = embeddings)", "the residual stream's RMS", "log"))


def plot(result, outdir):
    depths, placements = list(result["depths"]), list(result["placements"])
    n_seeds = len(result["seeds"])
    spread = f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"
    with _plot.figure(ncols=len(PANELS), nrows=len(depths), size=(26, 6.5 * len(depths))) as (fig, axes):
        for r, depth in enumerate(depths):
            for c, (key, ylabel, title, scale) in enumerate(PANELS):
                ax = axes[r, c]
                for placement in placements:
                    runs = result[f"{key}_{depth}"][placements.index(placement), :, 1]  # (seeds, L or L + 1)
                    x = np.arange(runs.shape[-1]) + (0 if key == "rms" else 1)
                    if n_seeds > 1:
                        ax.fill_between(x, runs.min(axis=0), runs.max(axis=0), color=COLORS[placement], alpha=0.15)
                    ax.plot(x, np.median(runs, axis=0), label=LABELS[placement],
                            **_plot.series(placement, COLORS, MARKERS, LINESTYLES))
                ax.set_yscale(scale, **({"linthresh": 1e-2} if scale == "symlog" else {}))
                ax.set(title=f"{depth} blocks: {title}", ylabel=ylabel,
                       xlabel="block l (1 = next to the input)" if key != "rms" else "stream after block l")
                ax.set_xticks(range(0 if key == "rms" else 1, depth + 1))
        axes[0, 0].legend(loc="best")
        fig.suptitle(f"Trained on the copy task ({result['steps']} steps, Adam lr = {result['lr']:g}), probed on "
                     f"one batch of {PROBE_BATCH} ({spread})")
        return [_plot.save(fig, outdir, NAME)]
