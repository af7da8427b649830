"""Peri-LN (Kim et al. 2025; the "sandwich" norm of Gemma 2 and 3): the residual stream in scale.

Four norm positions, with x_l the residual stream entering block l + 1 (x_0 the embeddings)::

    "post"      x_{l+1} = LN(x_l + F(x_l))
    "pre"       x_{l+1} = x_l + F(LN(x_l))
    "peri"      x_{l+1} = x_l + LN_out(F(LN_in(x_l)))
    "deepnorm"  x_{l+1} = LN(alpha * x_l + F(x_l))

Kim et al. argue that Pre-LN lets the residual stream's activations grow without bound in
training (each branch adds whatever its weights make of a normalised input), which shows as
large activations and loss spikes at high learning rates, while Peri-LN normalises what each
branch adds: with branches that are uncorrelated, ||x_l|| can only grow like sqrt(l) times the
output norms' gamma.

What this toy scale shows (an 8-block TinyTransformer, d_model 32, 4 heads, float32, on the copy
task, 8 symbols from 10; Adam at a constant learning rate, batches of 16, 200 steps, three seeds;
the stream and the gradients probed on one fixed batch of 64):

    at initialisation   Post-LN's and DeepNorm's stream leaves every block at RMS 1.00 (the
                        norm); Pre-LN's grows with depth, x_8 / x_0 = 1.9 to 2.3; Peri-LN's grows
                        faster, 3.0 to 3.6, because each branch adds a unit-RMS output (gamma_out
                        = 1) while Pre-LN's Xavier branches add less: x_l**2 ~ x_0**2 + 2 l.
    lr = 3e-3           Pre-LN, Peri-LN and DeepNorm reach a loss of 0.004; Post-LN is slow (1.7
                        to 2.0 at step 200, below the chance loss 2.30). Pre-LN's and Peri-LN's
                        streams end at about the same scale (x_8 / x_0 = 3.7 to 4.5 and 4.2 to 4.4).
    lr = 6e-2           Pre-LN's stream blows up from the first block: x_8 / x_0 = 190 to 356
                        (RMS about 700), while Peri-LN's stays at 6.5 to 9.1 (RMS about 16).
                        Pre-LN stays near chance (final loss 2.22 to 2.25) while Peri-LN learns
                        part of the task (0.56 to 1.77, a wide spread over seeds). Post-LN and
                        DeepNorm stay at chance: their gradients below the last block vanish
                        (1e-15 to 1e-9 in block 1, against 0.4 to 2 at initialisation).

The high learning rate was found by a brief sweep (8 blocks, 200 steps; final loss, and Pre-LN's
then Peri-LN's x_8 RMS): up to 3e-2 Pre-LN and Peri-LN both learn (Pre-LN's stream already at
RMS 77 to 85 at 3e-2, Peri-LN's 7); at 4e-2 both learn (Pre-LN 0.13 to 0.87, Peri-LN 0.02 to 0.31);
at 5e-2 Pre-LN learns partway (0.84 to 1.82) and Peri-LN better (0.32 to 0.72); at 6e-2 Pre-LN
stays near chance; at 1e-1 both do. So the window where Peri-LN trains and Pre-LN does not is
narrow here, about a factor of two in learning rate. Post-LN and DeepNorm fail from 1e-2 and
3e-2 on, respectively (one seed each).

What not to conclude: that Peri-LN's stream is always the smaller (at initialisation and at a
standard learning rate it is as large as Pre-LN's or larger; only in training at the high
learning rate does it stay far smaller than Pre-LN's), or that the stream's growth is why Pre-LN
stalls at 6e-2: the two are seen together, the cause is not tested. Attention collapsing onto
single keys is another candidate (the qk_norm experiment sees it in a 2-block Pre-LN model
without QK-norm at lr 1e-1; the attention is not measured here). Nor that Peri-LN trains at any
learning rate (at 6e-2 it learns only partway, at 1e-1 not at all). Kim et al. also report loss
spikes in Pre-LN at high learning rates; none are visible here: Pre-LN simply stalls near
chance. One toy task, one depth, a few hundred steps: nothing here measures the paper's claims
at scale.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from ..optim import Adam
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import COLORS, LABELS, LINESTYLES, MARKERS, block_grad_norms, residual_stream, tiny_model
from .warmup import copy_task, smooth

NAME = "peri_ln"
# shown as _(TITLE)
TITLE = N_("Peri-LN at a high learning rate: its residual stream grows far less than Pre-LN's")
TAKEAWAY = ("At a high Adam learning rate (6e-2, found by a sweep) an 8-block Pre-LN Transformer's residual "
            "stream grows to about 200-360 times its embeddings' RMS and it stays near the chance loss, while "
            "Peri-LN's grows only 6-9 times and it learns part of the task; at initialisation and at a standard "
            "learning rate Peri-LN's stream is as large as Pre-LN's or larger. Whether the growth is what stalls "
            "Pre-LN is not tested. The window is narrow here (Pre-LN still learns at 4e-2, both fail at 1e-1) "
            "and no loss spikes appear.")

POSITIONS = ("post", "pre", "peri", "deepnorm")
N_LAYERS = 8
LRS = (3e-3, 6e-2)  # a standard Adam learning rate, and a high one found by a sweep
BATCH_SIZE = 16
PROBE_BATCH = 64  # the fixed batch the residual stream and the gradients are measured on
PROBE_SEED = 12345


def rms(x):
    """The root mean square of every entry of x."""
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))


def residual_rms(model, tokens):
    """The RMS of the residual stream x_0 (the embeddings, entering block 1), x_1, ..., x_L (leaving
    each block), (L + 1,)."""
    return np.array([rms(x) for x in residual_stream(model, tokens)])


def probe(model):
    """(the residual stream's RMS (L + 1,), each block's gradient norm (L,)) on the probe batch."""
    tokens, targets = copy_task().batch(PROBE_BATCH, PROBE_SEED)
    return residual_rms(model, tokens), block_grad_norms(model, tokens, targets)


@single_thread()
def train(position, lr, steps, seed):
    """Probe a fresh model from ``seed``, train it with Adam at a constant ``lr``, probe it again.
    Returns (fit's history, probe at initialisation, probe after training)."""
    task = copy_task()
    model = tiny_model(task, position, N_LAYERS, seed, dtype=np.float32)
    at_init = probe(model)
    history = fit(model, task, Adam(model.parameters(), lr=lr), steps, progress=False, batch_size=BATCH_SIZE,
                  seed=seed + 1000)
    return history, at_init, probe(model)


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train every position at every learning rate from ``n_seeds`` initialisations.

    ``rms`` is (positions, seeds, 1 + lrs, L + 1) and ``grad`` (positions, seeds, 1 + lrs, L):
    index 0 of the third axis at initialisation, 1 + j after training at ``lrs[j]``; ``loss``
    is (positions, lrs, seeds, steps)."""
    quick = flag(quick, "quick", "experiments.peri_ln.run")
    steps, n_seeds = (50, 1) if quick else (200, 3)
    seeds = [seed + k for k in range(n_seeds)]
    P, S, J = len(POSITIONS), n_seeds, len(LRS)
    stream = np.zeros((P, S, 1 + J, N_LAYERS + 1))
    grad = np.zeros((P, S, 1 + J, N_LAYERS))
    loss = np.zeros((P, J, S, steps))
    total, done = P * J * S, 0
    for i, position in enumerate(POSITIONS):
        for j, lr in enumerate(LRS):
            for k, s in enumerate(seeds):
                history, (stream[i, k, 0], grad[i, k, 0]), (stream[i, k, 1 + j], grad[i, k, 1 + j]) = \
                    train(position, lr, steps, s)
                loss[i, j, k] = history["loss"]
                done += 1
                if progress is not None:
                    progress(done, total, f"{position} lr={lr:g} seed {s}")
    final = loss[..., -20:].mean(axis=-1)  # (positions, lrs, seeds)
    return {"positions": np.array(POSITIONS), "lrs": np.array(LRS), "seeds": np.array(seeds),
            "rms": stream, "grad": grad, "loss": loss, "final_loss": final,
            "growth": stream[..., -1] / stream[..., 0],  # (positions, seeds, 1 + lrs): x_L over x_0
            "chance_loss": math.log(copy_task().n_symbols), "n_layers": N_LAYERS, "steps": steps}


def _spread(n_seeds):
    return f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"


def _draw(ax, x, runs, position, **kw):
    """The median over seeds (rows of ``runs``) of one position, with the range as a band."""
    if len(runs) > 1:
        ax.fill_between(x, runs.min(axis=0), runs.max(axis=0), color=COLORS[position], alpha=0.18)
    ax.plot(x, np.median(runs, axis=0), **_plot.series(position, COLORS, MARKERS, LINESTYLES, **kw),
            label=LABELS[position])


def plot_profiles(result, outdir):
    positions, lrs = list(result["positions"]), result["lrs"]
    n_layers, n_seeds = result["n_layers"], len(result["seeds"])
    titles = ["at initialisation"] + [f"after {result['steps']} steps at lr = {lr:g}" for lr in lrs]
    with _plot.figure(ncols=len(titles), nrows=2, size=(22, 12), sharey="row") as (fig, axes):
        for c, title in enumerate(titles):
            ax_r, ax_g = axes[0, c], axes[1, c]
            for i, position in enumerate(positions):
                _draw(ax_r, np.arange(n_layers + 1), result["rms"][i, :, c], position)
                _draw(ax_g, np.arange(1, n_layers + 1), result["grad"][i, :, c], position)
            ax_r.set(yscale="log", title=title, xlabel="residual stream after block l (0 = embeddings)")
            ax_g.set(yscale="log", xlabel="block (1 = next to the input)")
            for ax in (ax_r, ax_g):
                ax.set_xticks(range(0, n_layers + 1, 2))
        axes[0, 0].set_ylabel("RMS of the residual stream x_l")
        axes[1, 0].set_ylabel("gradient norm of the block's parameters")
        axes[0, 0].legend(loc="upper left")
        fig.suptitle(f"{n_layers}-block Transformer on the copy task, Adam at a constant lr, probed on one "
                     f"batch of {PROBE_BATCH} ({_spread(n_seeds)})")
        return _plot.save(fig, outdir, NAME)


def plot_curves(result, outdir):
    positions, lrs = list(result["positions"]), result["lrs"]
    steps = np.arange(1, result["loss"].shape[-1] + 1)
    n_seeds = len(result["seeds"])
    with _plot.figure(ncols=len(lrs), size=(19, 7), sharey=True) as (fig, axes):
        for j, (ax, lr) in enumerate(zip(axes, lrs)):
            for i, position in enumerate(positions):
                _draw(ax, steps, np.array([smooth(run) for run in result["loss"][i, j]]), position,
                      markevery=(5 * (i + 1), len(steps) // 6))
            ax.axhline(result["chance_loss"], color=_plot.OKABE_ITO["black"], linestyle=":", linewidth=2.5,
                       label=f"chance, ln(10) = {result['chance_loss']:.2f}")
            ax.set(xlabel="training step", title=f"Adam, lr = {lr:g}")
        axes[0].set_ylabel("training loss (cross-entropy, 10-step mean)")
        axes[0].legend(loc="lower left")
        high = max(lrs)
        fig.suptitle(f"{result['n_layers']}-block Transformer on the copy task ({_spread(n_seeds)}); "
                     f"lr = {high:g} is a high rate found by a sweep,\nwhere Pre-LN stalls near chance and "
                     "Peri-LN learns partway (Pre-LN still learns at 4e-2, neither at 1e-1)")
        return _plot.save(fig, outdir, f"{NAME}_curves")


def plot(result, outdir):
    return [plot_profiles(result, outdir), plot_curves(result, outdir)]
