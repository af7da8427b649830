"""No norm at all: LayerScale and ReZero against Pre-LN in a deep residual MLP, over learning rates.

A residual stack of L blocks x_{l+1} = x_l + S(F(N(x_l))), with F = Linear -> ReLU -> Linear
(width 64; the first Linear Kaiming-normal, the second N(0, 1/64), so F keeps its input's scale)
and four choices of N and S:

    "pre_ln"      N = LayerNorm, S = identity              Pre-LN
    "plain"       N = identity,  S = identity              no norm, no scale
    "layerscale"  N = identity,  S = LayerScale(init 0.1)  CaiT's per-channel scale, its value
                                                           for depths up to 18 (Touvron et al. 2021)
    "rezero"      N = identity,  S = ReZero (alpha = 0)    Bachlechner et al. 2020

between a Linear embedding (20 -> 64) and a Linear head (64 -> 10; after a final LayerNorm for
Pre-LN), on the synthetic 10-class teacher task. Each is trained with Adam at a constant
learning rate from a small sweep, from the same initialisations and on the same batches, and
measured by its training loss over the last 10% of the steps (inf when it overflowed) and its
held-out accuracy. At initialisation the plain stack's residual stream grows like 2^(L/2)
(each block adds a branch as large as its input), Pre-LN's like sqrt(1 + L), and ReZero's and
LayerScale's hardly at all: that is measured too.

Finding (full run: 16 blocks, 300 steps, learning rates 1e-3 to 1e-1, 2 seeds): at initialisation
the plain stack's stream leaves block 16 at 433 times its input's RMS (8e4 at 32 blocks, 5e9 at
64), Pre-LN's at 4.5 times, LayerScale's at 1.08 and ReZero's at exactly 1. Trained, ReZero and
LayerScale reach a lower training loss than Pre-LN at 1e-3 (0.51-0.54 against 0.56-0.59) and a
higher held-out accuracy (75-77% against 72-73%), are level with it at 1e-2 and 3e-2, and diverge
at 1e-1 (LayerScale in both seeds, ReZero in one; the other ends at 1.66), where Pre-LN still ends
at 0.72-0.74 and 73%. The plain stack is best at 1e-2 (0.98-1.04, 64%) and diverges at 1e-1. So
here no norm is needed to train at depth, but the norm buys the highest learning rate.

What it does not show: Transformers (no attention here: the blocks are MLPs), nor SkipInit (De &
Smith 2020), which is ReZero's scalar in a network with BatchNorm removed; the learning-rate
sweep is coarse (half-decades) and one depth is trained.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import LayerNorm, LayerScale, ReZero
from ..module import Module, Sequential
from ..nn import CrossEntropyLoss, ReLU
from ..optim import Adam
from ..perf.threads import single_thread
from . import _plot
from ._nn import linear, teacher_task

NAME = "no_norm"
# shown as _(TITLE)
TITLE = N_("No norm at all: LayerScale and ReZero against Pre-LN in a deep residual MLP")
TAKEAWAY = ("In a 16-block residual MLP with no norm at all, ReZero (alpha = 0) and LayerScale (0.1) keep the "
            "residual stream at its input's scale and train as well as Pre-LN from Adam lr 1e-3 to 3e-2 (a little "
            "better at the low rates), but diverge at 1e-1, where Pre-LN still trains; the same stack with neither "
            "norm nor scale starts with a stream 430 times its input and trains badly at every learning rate.")

WIDTH, LAYERSCALE_INIT, BATCH = 64, 0.1, 64
VARIANTS = ("pre_ln", "plain", "layerscale", "rezero")
LABELS = {"pre_ln": "Pre-LN", "plain": "no norm, no scale", "layerscale": "LayerScale (0.1), no norm",
          "rezero": "ReZero (alpha = 0), no norm"}
_OI = _plot.OKABE_ITO
COLORS = {"pre_ln": _OI["blue"], "plain": _OI["grey"], "layerscale": _OI["orange"], "rezero": _OI["green"]}
MARKERS = {"pre_ln": "s", "plain": "X", "layerscale": "o", "rezero": "^"}
LINESTYLES = {"pre_ln": "--", "plain": ":", "layerscale": "-", "rezero": "-."}


class Residual(Module):
    """x + scale(branch(norm(x))); ``norm`` and ``scale`` may be None (the identity).

    Backward: d_branch_out = scale'(dy), dx = dy + norm'(branch'(d_branch_out))."""

    def __init__(self, branch, norm=None, scale=None):
        self.branch, self.norm, self.scale = branch, norm, scale

    def forward(self, x):
        h = self.norm(x) if self.norm is not None else x
        f = self.branch(h)
        return x + (self.scale(f) if self.scale is not None else f)

    def backward(self, dy):
        df = self.scale.backward(dy) if self.scale is not None else dy
        dh = self.branch.backward(df)
        return dy + (self.norm.backward(dh) if self.norm is not None else dh)


def network(variant, depth, seed):
    """Embedding, ``depth`` residual blocks of ``variant``, [final LayerNorm,] head."""
    rng = np.random.default_rng(seed)
    kaiming = np.sqrt(2.0 / WIDTH)  # F keeps the scale of its input
    blocks = []
    for _ in range(depth):
        branch = Sequential(linear(WIDTH, WIDTH, kaiming, rng), ReLU(), linear(WIDTH, WIDTH, kaiming / np.sqrt(2), rng))
        norm = LayerNorm(WIDTH) if variant == "pre_ln" else None
        scale = {"layerscale": lambda: LayerScale(WIDTH, init=LAYERSCALE_INIT), "rezero": ReZero}.get(variant)
        blocks.append(Residual(branch, norm, scale() if scale else None))
    final = [LayerNorm(WIDTH)] if variant == "pre_ln" else []
    return Sequential(linear(20, WIDTH, 20 ** -0.5, rng), *blocks, *final, linear(WIDTH, 10, WIDTH ** -0.5, rng))


def stream_growth(variant, depth, seed, x):
    """RMS of the residual stream leaving the last block over its RMS entering the first, at
    initialisation."""
    model = network(variant, depth, seed)
    layers = list(model)
    h0 = layers[0](x)
    h = h0
    for block in layers[1:1 + depth]:
        h = block(h)
    return float(np.sqrt(np.mean(h ** 2) / np.mean(h0 ** 2)))


@single_thread()
def train(variant, depth, lr, steps, seed, data):
    """Adam at a constant ``lr``; (losses (steps,), held-out accuracy). A loss that overflows
    stops the run: the remaining steps are inf."""
    (x, y), (x_test, y_test) = data
    model = network(variant, depth, seed)
    opt = Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng([seed, 11])
    losses = np.full(steps, np.inf)
    for t in range(steps):
        idx = rng.integers(0, len(x), BATCH)
        loss_fn = CrossEntropyLoss()
        with np.errstate(over="ignore", invalid="ignore"):
            loss = float(loss_fn(model(x[idx]), y[idx]))
            if not np.isfinite(loss):
                return losses, np.nan
            losses[t] = loss
            model.backward(loss_fn.backward())
        opt.step()
        opt.zero_grad()
    with np.errstate(over="ignore", invalid="ignore"):
        accuracy = float(np.mean(np.argmax(model(x_test), 1) == y_test))
    return losses, accuracy


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Every variant at every learning rate from ``n_seeds`` initialisations: ``final_loss``
    and ``accuracy`` are (variants, lrs, seeds), ``loss`` (variants, lrs, seeds, steps);
    ``growth`` (variants, depths) the stream's growth at initialisation."""
    quick = flag(quick, "quick", "experiments.no_norm.run")
    depth, lrs, steps, n_seeds = (16, (1e-3,), 100, 1) if quick else (16, (1e-3, 3e-3, 1e-2, 3e-2, 1e-1), 300, 2)
    depths = (4, 16) if quick else (4, 8, 16, 32, 64)
    rng = np.random.default_rng([seed, 41])
    data = (teacher_task(8192, rng=rng), teacher_task(1024, rng=rng))
    V, J, S = len(VARIANTS), len(lrs), n_seeds
    loss, accuracy = np.zeros((V, J, S, steps)), np.zeros((V, J, S))
    done = 0
    for i, variant in enumerate(VARIANTS):
        for j, lr in enumerate(lrs):
            for k in range(S):
                loss[i, j, k], accuracy[i, j, k] = train(variant, depth, lr, steps, seed + k, data)
                done += 1
                if progress:
                    progress(done, V * J * S, f"{variant}, lr {lr:g}, seed {k}")
    x = data[1][0][:256]
    growth = np.array([[stream_growth(v, d, seed, x) for d in depths] for v in VARIANTS])
    tail = max(1, steps // 10)
    return {"variants": np.array(VARIANTS), "lrs": np.array(lrs), "depth": depth, "steps": steps,
            "seeds": n_seeds, "loss": loss, "final_loss": loss[..., -tail:].mean(axis=-1),
            "accuracy": accuracy, "depths": np.array(depths), "growth": growth,
            "chance_loss": float(np.log(10))}


DIVERGED = 10.0  # a final training loss above this (ln 10 = 2.30 is chance) counts as diverged


def plot(result, outdir):
    lrs, variants = result["lrs"], list(result["variants"])
    n_seeds = result["seeds"]
    with _plot.figure(ncols=3, size=(25, 7.5)) as (fig, (ax_g, ax_l, ax_a)):
        for i, v in enumerate(variants):
            style = _plot.series(v, COLORS, MARKERS, LINESTYLES, markersize=12)
            ax_g.plot(result["depths"], result["growth"][i], **style, label=LABELS[v])
            final = np.median(result["final_loss"][i], axis=-1)          # inf when a seed overflowed
            diverged = ~(final < DIVERGED)
            ax_l.plot(lrs, np.where(diverged, np.nan, final), **style, label=LABELS[v])
            ax_l.plot(lrs[diverged], np.full(diverged.sum(), 1.5 * DIVERGED), linestyle="none",
                      marker=MARKERS[v], color=COLORS[v], markersize=18, markerfacecolor="none")
            accuracy = np.where(np.isnan(result["accuracy"][i]), 0.0, result["accuracy"][i])
            ax_a.plot(lrs, 100 * np.median(accuracy, axis=-1), **style, label=LABELS[v])
        ax_g.set(xscale="log", yscale="log", xlabel="depth L (blocks)", ylabel="RMS(x_L) / RMS(x_0)",
                 title="residual stream at initialisation")
        ax_g.set_xticks(result["depths"], [str(d) for d in result["depths"]])
        ax_g.xaxis.set_minor_locator(_plot.matplotlib.ticker.NullLocator())
        ax_l.axhline(result["chance_loss"], color=_OI["black"], linestyle=":", linewidth=2,
                     label=f"chance, ln 10 = {result['chance_loss']:.2f}")
        ax_l.set(xscale="log", yscale="log", xlabel="Adam learning rate", ylim=(0.3, 3 * DIVERGED),
                 ylabel=f"training loss, last {max(1, result['steps'] // 10)} steps",
                 title=f"{result['depth']} blocks, {result['steps']} steps (hollow, top: diverged)")
        ax_a.set(xscale="log", xlabel="Adam learning rate", ylabel="held-out accuracy (%)",
                 title="held-out accuracy (0 when overflowed)", ylim=(0, 100))
        ax_g.legend(loc="upper left")
        ax_l.legend(loc="upper left", fontsize="small")
        spread = f"median of {n_seeds} seeds" if n_seeds > 1 else "one seed"
        fig.suptitle(f"Residual MLP x + S(F(N(x))), width {WIDTH}, batches of {BATCH}, constant learning rate "
                     f"({spread})")
        return [_plot.save(fig, outdir, NAME)]
