"""Output change under a small weight change, against depth (Liu et al., 2020, "Admin").

Liu et al. trace Post-LN's training trouble to its heavy dependence on the residual branches:
every block's output passes through all later norms with a comparable weight, so a small change
of every weight moves the model's output by an amount that grows like O(L) with the number of
blocks L. Pre-LN adds the branches to a growing stream; block l's share of the final,
normalised output shrinks like 1/l, and the change grows only like O(log L).

Measured here: a freshly initialised TinyTransformer (d_model 32, 4 heads, float64) with L
blocks and embeddings drawn small (standard deviation 0.1, as GPT-2 draws its own small), its
logits F(x, W) on one batch of a labelling task, then every block parameter moved by an
independent N(0, sigma**2) (a random step of Adam's size, sigma = 1e-3; called sigma, not eps,
to keep it apart from the norm's eps), and

    output change = mean over logits of (F(x, W + delta) - F(x, W))**2 / sigma**2

The change is in its linear regime (the ratio does not depend on sigma). Across random
initialisations it is heavy-tailed for Post-LN (twentyfold at 32 blocks), so the geometric mean
over seeds is shown. Lines: a fit c * L to Post-LN and a + b * ln(L) to Pre-LN.

Why small embeddings: the O(log L) argument assumes Pre-LN's stream is the sum of the blocks'
outputs. With unit-variance embeddings the embedding dominates the stream of a shallow model,
and up to about 16 blocks Pre-LN's change then grows nearly linearly too (about 40 per block
here); the logarithm shows only once the blocks' sum dominates the stream.
Post-LN normalises after every block, so the embedding scale hardly matters to it.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from ..perf.threads import single_thread
from . import _plot
from ._positions import COLORS, LABELS, LINESTYLES, MARKERS, POSITIONS, labelling_task, tiny_model

NAME = "output_change"
TITLE = N_("Output change under a small random weight change, against depth")  # shown as _(TITLE)
TAKEAWAY = ("Move every weight a little: a Post-LN Transformer's output moves in proportion to its depth, "
            "a Pre-LN one's only about logarithmically. Liu et al. (2020) argue that this is why Post-LN is "
            "fragile to large updates; measured here at initialisation and for random, not trained, updates.")

SIGMA = 1e-3  # the standard deviation of the weight perturbation
EMBEDDING_STD = 0.1
BATCH_SIZE = 16


@single_thread()
def output_change(position, n_layers, seed, sigma=SIGMA):
    """Mean squared change of the logits, divided by sigma**2, when every block weight moves by N(0, sigma**2)."""
    task = labelling_task()
    tokens, _ = task.batch(BATCH_SIZE, seed + 500)
    model = tiny_model(task, position, n_layers, seed, embedding_std=EMBEDDING_STD)
    before = model(tokens)
    rng = np.random.default_rng(seed + 77)
    for p in model.blocks.parameters():
        p.data += sigma * rng.standard_normal(p.shape)
    return float(np.mean((model(tokens) - before) ** 2)) / sigma**2


def fit_linear(depths, change):
    """c of the least-squares fit change ~ c * L (through the origin)."""
    return float(np.sum(depths * change) / np.sum(depths * depths))


def fit_log(depths, change):
    """(a, b) of the least-squares fit change ~ a + b * ln(L)."""
    b, a = np.polyfit(np.log(depths), change, 1)
    return float(a), float(b)


def r_squared(y, fitted):
    return float(1.0 - np.sum((y - fitted) ** 2) / np.sum((y - np.mean(y)) ** 2))


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.output_change.run")
    depths = np.array([1, 2, 4, 8, 16, 32] if quick else [1, 2, 4, 8, 12, 16, 24, 32])
    n_seeds = 4 if quick else 16  # Post-LN varies twentyfold between initialisations at depth
    seeds = [seed * 1000 + s for s in range(n_seeds)]
    change = np.zeros((len(POSITIONS), len(depths), n_seeds))
    total, done = change.size, 0
    for i, position in enumerate(POSITIONS):
        for j, depth in enumerate(depths):
            for k, s in enumerate(seeds):
                change[i, j, k] = output_change(position, depth, s)
                done += 1
                if progress is not None:
                    progress(done, total, f"{position} L={depth}")
    typical = np.exp(np.log(change).mean(axis=2))  # geometric mean over seeds, (positions, depths)
    post, pre = typical[POSITIONS.index("post")], typical[POSITIONS.index("pre")]
    c = fit_linear(depths, post)
    a, b = fit_log(depths, pre)
    return {
        "positions": np.array(POSITIONS), "depths": depths, "change": change, "typical": typical,
        "post_linear_c": c, "post_linear_r2": r_squared(post, c * depths),
        "pre_log_a": a, "pre_log_b": b, "pre_log_r2": r_squared(pre, a + b * np.log(depths)),
        "pre_linear_r2": r_squared(pre, fit_linear(depths, pre) * depths),
        "n_seeds": n_seeds, "sigma": SIGMA,
    }


def plot(result, outdir):
    depths = result["depths"]
    fine = np.linspace(1, depths[-1], 200)
    fits = {"post": (result["post_linear_c"] * fine, f"fit {result['post_linear_c']:.0f} L"),
            "pre": (result["pre_log_a"] + result["pre_log_b"] * np.log(fine),
                    f"fit {result['pre_log_a']:.0f} + {result['pre_log_b']:.0f} ln L")}
    with _plot.figure(ncols=2, size=(19, 7)) as (fig, axes):
        for ax, shown in ((axes[0], ("post", "pre", "deepnorm")), (axes[1], ("pre", "deepnorm"))):
            for i, position in enumerate(result["positions"]):
                if position not in shown:
                    continue
                color = COLORS[position]
                for k in range(result["change"].shape[2]):
                    ax.scatter(depths, result["change"][i, :, k], color=color, alpha=0.2, s=25)
                ax.plot(depths, result["typical"][i], **_plot.series(position, COLORS, MARKERS, LINESTYLES),
                        label=LABELS[position])
                if position in fits:
                    curve, text = fits[position]
                    ax.plot(fine, curve, color=color, linestyle=":", linewidth=2.5,
                            label=f"{LABELS[position]} {text}")
            ax.set_xlabel("number of blocks L")
            ax.legend(loc="upper left")
        shown = [i for i, p in enumerate(result["positions"]) if p != "post"]
        axes[0].set(ylabel=r"output change $|F(W+\delta) - F(W)|^2 / \sigma^2$",
                    ylim=(0, 1.3 * result["typical"].max()), title="All three: Post-LN grows like L")
        axes[1].set(xscale="log", ylim=(0, 1.5 * result["typical"][shown].max()),
                    title="Pre-LN on a log-L axis: a line, so ln L")
        axes[1].set_xticks(depths, [str(d) for d in depths])
        fig.suptitle(f"Logit change when every block weight moves by N(0, σ²), σ = {result['sigma']:g} "
                     f"(geometric mean of {result['n_seeds']} initialisations, dots: each one)")
        return [_plot.save(fig, outdir, NAME)]
