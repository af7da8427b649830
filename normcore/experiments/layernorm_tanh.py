"""Does LayerNorm act like a tanh? (Zhu, Chen, He, LeCun and Liu, 2025, the finding behind DyT.)

Zhu et al. plot, for the LayerNorms of trained Transformers (ViT, DiT, wav2vec 2.0), each
element's input x against its normalised output x_hat = (x - mean) / std before the affine
gamma, beta, and find S-shaped clouds close to y = tanh(alpha * x): per token the map is a
straight line of slope 1/std_token, but tokens with a large std get a shallow line, so the
extreme inputs, which sit in those tokens, are squashed. That motivates DyT, which replaces the
norm by gamma * tanh(alpha * x) + beta with a learned scalar alpha, which they find tracks
1/std of the layer's input.

Configuration (picked from a handful of runs, which all gave the same marginal bend: also the
teacher labelling task, 6 blocks, embeddings of std 0.02, lr up to 1e-2, 1500 steps): a Pre-LN
TinyTransformer with 8 blocks (d_model 32, 4 heads, unit-variance embeddings, float32) trained
on the copy task (8 symbols from 10, repeated after a separator) with Adam at lr = 3e-3 and a
linear warmup over the first tenth of the steps, batches of 16, until it copies every token.
On a held-out batch of 64 sequences every LayerNorm (each block's two and the final one, 17 in
all) has its input recorded by a wrapper around its forward, and x_hat is recomputed from that
input by a LayerNorm without affine. Per layer, over all elements, we fit by least squares

    y = c * tanh(alpha * x)     alpha by a grid search over alpha * std, c in closed form
    y = a * x                   the best straight line through the origin

and report R^2 of each (the fraction of the variance of x_hat explained), the share of the
straight line's residual that the tanh removes, alpha * std (std of the layer's whole input),
and the spread of the tokens' own std (95th over 5th percentile). The same is measured on the
same models at initialisation. The full run trains three initialisations.

What this toy scale shows (full run, 3 seeds): per token the map is exactly linear (R^2 = 1 to
rounding, slope 1/std_token up to eps), and across tokens the cloud bends only slightly. The
tanh fits better than the straight line in every layer, but only marginally: R^2 goes up by
0.0004 to 0.005 (both 0.88 to 0.98 across layers, seeds and states; 0.94 to 0.98 trained), the
tanh removing 0.5 to 13 per cent of the straight line's residual (median about 3 per cent at
initialisation, 4 per cent trained). The pronounced S of Zhu et al.'s figures comes from a few
tokens with extreme values; here the tokens' std differ by a factor of only 1.4 to 1.8 (95th
over 5th percentile), so there is little to squash. Training adds a little in the deepest norms
(the last two blocks and the final norm: a median 4.6 per cent of the residual removed after
training against 2.3 per cent at initialisation), but the ranges over seeds overlap and one
seed's untrained model already shows 4.7 per cent. The fitted alpha does scale with 1/std: alpha
* std stays between 0.17 and 0.32 while std varies two- to four-fold across layers (log-log
slope of alpha against 1/std 0.6 to 1.1 per seed). That is nearly forced: x_hat has unit
variance per token, so the fitted curve's slope at 0, c * alpha, is within 7 per cent of 1/std
whatever its shape. Without the output scale c a tanh fits worse than the straight line (R^2
about 0.8 to 0.85), since |x_hat| often exceeds 1.

What not to conclude: that a LayerNorm computes a tanh; per token it is exactly linear. Nor
that this toy model reproduces the pronounced S-shapes of Zhu et al.: it reproduces the
mechanism (lines of slope 1/std_token fanning out) but not the extreme tokens that make the S.
"""

import contextlib

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import tasks
from ..norms import LayerNorm
from ..optim import Adam, linear_warmup
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import tiny_model

NAME = "layernorm_tanh"
TITLE = N_("Does LayerNorm act like a tanh? Input against normalised output, per element")  # shown as _(TITLE)
TAKEAWAY = ("Per token, no: in a trained 8-block Pre-LN Transformer each LayerNorm maps every token exactly "
            "linearly (slope 1/std of the token). Across tokens the cloud of input against normalised output "
            "bends only slightly: a fitted c*tanh(alpha*x) beats the best straight line in every layer but only "
            "marginally (R^2 up by at most 0.005, from 0.88-0.98), because this toy model has no tokens "
            "with extreme values to squash, which make the pronounced S-shape of Zhu et al.; the fitted alpha "
            "does track 1/std (alpha*std 0.17 to 0.32).")

N_LAYERS = 8
LR = 3e-3
BATCH_SIZE = 16
HELD_OUT = 64  # sequences in the held-out batch
STATES = ("init", "trained")
ALPHA_STD = np.geomspace(0.01, 10.0, 301)  # the grid of alpha * std searched by fit_tanh


def copy_task():
    return tasks.CopyTask(n_tokens=8, n_symbols=10)


def layernorms(model):
    """[(name, LayerNorm)] of a Pre-LN TinyTransformer in forward order: "3.attn" is block 3's norm
    before its attention, "3.ffn" before its feed-forward, "final" the norm before the head."""
    named = []
    for i, block in enumerate(model.blocks, start=1):
        named += [(f"{i}.attn", block.norm1), (f"{i}.ffn", block.norm2)]
    return named + [("final", model.norm_f)]


@contextlib.contextmanager
def recording(named):
    """While active, each norm in ``named`` keeps a copy of what its forward received and
    returned, in ``seen[name] = (x, y)``; the norms' own forward and cache are left as they are."""
    seen = {}

    def wrap(name, forward):
        def record(x):
            y = forward(x)
            seen[name] = (np.array(x, copy=True), np.array(y, copy=True))
            return y
        return record

    for name, norm in named:
        norm.forward = wrap(name, norm.forward)  # an instance attribute shadows the class's forward
    try:
        yield seen
    finally:
        for _, norm in named:
            del norm.forward


def normalised(x, norm):
    """x_hat = (x - mean) / sqrt(var + eps) of ``norm`` for input x: a fresh LayerNorm without
    affine, with the same eps, so the norm under study is not run twice."""
    return LayerNorm(x.shape[-1], eps=norm.eps, elementwise_affine=False, dtype=x.dtype)(x)


def layer_io(model, tokens):
    """{name: (x, x_hat, y)} for every LayerNorm on ``tokens``: its input, its normalised input and
    its output, each (B, T, C)."""
    named = layernorms(model)
    with recording(named) as seen:
        model(tokens)
    return {name: (seen[name][0], normalised(seen[name][0], norm), seen[name][1]) for name, norm in named}


def r_squared(y, fitted):
    """The fraction of the variance of y that ``fitted`` explains: 1 - SSE / SST."""
    return 1.0 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2)


def fit_line(x, y):
    """The least-squares slope a of y = a * x."""
    return float(x @ y / (x @ x))


def fit_tanh(x, y, scale=True):
    """(alpha, c) minimising sum (y - c * tanh(alpha * x))**2: alpha from the grid ALPHA_STD / std(x),
    c in closed form for each alpha (c = 1 with ``scale=False``)."""
    best = (np.inf, 0.0, 1.0)
    for alpha in ALPHA_STD / x.std():
        t = np.tanh(alpha * x)
        c = float(t @ y / (t @ t)) if scale else 1.0
        sse = float(np.sum((y - c * t) ** 2))
        best = min(best, (sse, float(alpha), c))
    return best[1], best[2]


def per_token_lines(x, x_hat):
    """Per token, the least-squares line x_hat = slope * x + offset: (slope, R^2), each (B*T,)."""
    x, x_hat = x.reshape(-1, x.shape[-1]), x_hat.reshape(-1, x.shape[-1])
    xc, yc = x - x.mean(-1, keepdims=True), x_hat - x_hat.mean(-1, keepdims=True)
    slope = (xc * yc).sum(-1) / (xc * xc).sum(-1)
    r2 = 1.0 - ((yc - slope[:, None] * xc) ** 2).sum(-1) / (yc * yc).sum(-1)
    return slope, r2


def describe(x, x_hat):
    """The fits of one layer over all its elements (float64)."""
    token_std = x.std(-1).ravel()
    slope, token_r2 = per_token_lines(x.astype(np.float64), x_hat.astype(np.float64))
    x, y = x.astype(np.float64).ravel(), x_hat.astype(np.float64).ravel()
    alpha, c = fit_tanh(x, y)
    a = fit_line(x, y)
    r2_tanh, r2_line = r_squared(y, c * np.tanh(alpha * x)), r_squared(y, a * x)
    std = float(x.std())
    return {
        "alpha": alpha, "c": c, "line_slope": a, "std": std, "alpha_std": alpha * std,
        "r2_tanh": r2_tanh, "r2_line": r2_line, "r2_tanh_unscaled": r_squared(y, np.tanh(fit_tanh(x, y, False)[0] * x)),
        "residual_removed": 1.0 - (1.0 - r2_tanh) / (1.0 - r2_line),  # of the line's residual, by the tanh
        "token_std_spread": float(np.percentile(token_std, 95) / np.percentile(token_std, 5)),
        "token_r2_min": float(token_r2.min()),
        # slope of the per-token line against 1/std_token (eps aside, equal)
        "token_slope_error": float(np.max(np.abs(slope * token_std - 1.0))),
    }


def measure(model, tokens):
    """Every LayerNorm's fits on ``tokens``: {quantity: (n_norms,)} and the names."""
    io = layer_io(model, tokens)
    rows = [describe(x, x_hat) for x, x_hat, _ in io.values()]
    return list(io), {k: np.array([r[k] for r in rows]) for k in rows[0]}, io


def affine_error(model, io):
    """max |y - (x_hat * gamma + beta)| over every norm: the recomputed x_hat is what the norm used."""
    norms = dict(layernorms(model))
    return max(float(np.max(np.abs(y - (x_hat * norms[name].weight.data + norms[name].bias.data))))
               for name, (_, x_hat, y) in io.items())


def sample_points(x, x_hat, n, rng):
    """n random elements of one layer: (x, x_hat, std of the element's token), each (n,)."""
    token_std = np.broadcast_to(x.std(-1, keepdims=True), x.shape)
    pick = rng.choice(x.size, size=min(n, x.size), replace=False)
    return x.ravel()[pick], x_hat.ravel()[pick], token_std.ravel()[pick]


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Measure every LayerNorm at initialisation and after training, for ``n_seeds``
    initialisations (seed, seed + 1, ...); per-layer arrays are (states, seeds, norms) with
    states ("init", "trained"); ``points`` holds the scatter of the first seed."""
    quick = flag(quick, "quick", "experiments.layernorm_tanh.run")
    steps, n_seeds = (150, 1) if quick else (800, 3)
    task = copy_task()
    tokens, _ = task.batch(HELD_OUT, seed + 10_000)  # never a training batch: those come from seed + 1000
    per_layer, points, history, affine = {}, {}, [], []
    for k in range(n_seeds):
        model = tiny_model(task, "pre", N_LAYERS, seed + k, dtype=np.float32)
        for s, state in enumerate(STATES):
            if state == "trained":
                history.append(fit(model, task, Adam(model.parameters(), lr=LR), steps,
                                   schedule=linear_warmup(LR, steps // 10), progress=False,
                                   batch_size=BATCH_SIZE, seed=seed + k + 1000))
            model.eval()
            names, fits, io = measure(model, tokens)
            affine.append(affine_error(model, io))
            for key, values in fits.items():
                per_layer.setdefault(key, np.zeros((len(STATES), n_seeds, len(names))))[s, k] = values
            if k == 0:
                rng = np.random.default_rng(seed)
                points[state] = np.array([sample_points(x, x_hat, 1500, rng) for x, x_hat, _ in io.values()])
            if progress is not None:
                progress(len(STATES) * k + s + 1, len(STATES) * n_seeds, f"seed {seed + k} {state}")
    return {
        "names": np.array(names), "states": np.array(STATES), "seeds": seed + np.arange(n_seeds),
        **per_layer, "points": np.array([points["init"], points["trained"]]),  # (states, norms, 3, n)
        "final_loss": np.array([h["loss"][-20:].mean() for h in history]),
        "final_accuracy": np.array([h["accuracy"][-20:].mean() for h in history]),
        "affine_error": max(affine), "n_layers": N_LAYERS, "steps": steps, "lr": LR,
    }


def shown_layers(names):
    """Indices of a shallow, a middle and the deepest norm."""
    return [0, len(names) // 2, len(names) - 1]


def describe_norm(name):
    """"3.attn" -> "block 3, before attention"; "final" -> "final norm"."""
    if name == "final":
        return "final norm, before the head"
    block, sublayer = name.split(".")
    return f"block {block}, before {'attention' if sublayer == 'attn' else 'feed-forward'}"


OI = _plot.OKABE_ITO
# the series of the summary figure: the state (colour) and the fitted curve (line style)
COLORS = {"trained": OI["blue"], "init": OI["orange"], "trained tanh": OI["blue"], "trained line": OI["sky_blue"],
          "init tanh": OI["vermillion"], "init line": OI["orange"]}
MARKERS = {"trained": "o", "init": "s", "trained tanh": "o", "trained line": "^", "init tanh": "s", "init line": "D"}
LINESTYLES = {"trained": "-", "init": "--", "trained tanh": "-", "trained line": ":", "init tanh": "--",
              "init line": "-."}
TOKEN_STD = _plot.matplotlib.colors.LinearSegmentedColormap.from_list(
    "token_std", [OI["blue"], OI["sky_blue"], OI["yellow"], OI["orange"], OI["vermillion"]])


def _scatter_panel(ax, result, state, i):
    s = list(result["states"]).index(state)
    x, x_hat, token_std = result["points"][s, i]
    relative = token_std / np.median(token_std)
    order = np.argsort(relative)  # the extreme tokens drawn last, on top
    dots = ax.scatter(x[order], x_hat[order], c=relative[order], cmap=TOKEN_STD, vmin=0.6, vmax=1.6, s=9,
                      alpha=0.7, linewidths=0)
    grid = np.linspace(x.min(), x.max(), 200)
    alpha, c, a = (result[key][s, 0, i] for key in ("alpha", "c", "line_slope"))
    r2t, r2l = (result[key][s, 0, i] for key in ("r2_tanh", "r2_line"))
    ax.plot(grid, c * np.tanh(alpha * grid), color=OI["black"], linestyle="-", marker="o", markevery=40,
            label=f"{c:.1f} tanh({alpha:.3f} x), R$^2$ {r2t:.4f}")
    ax.plot(grid, a * grid, color=OI["purple"], linestyle="--", marker="s", markevery=(20, 40),
            label=f"straight line {a:.3f} x, R$^2$ {r2l:.4f}")
    ax.set_title(f"{state}: {describe_norm(result['names'][i])}", fontsize=16)
    ax.legend(loc="upper left", fontsize=12.5)
    return dots


def _over_seeds(ax, x, values, name, label):
    """The median over seeds (axis 0) with its range as error bars."""
    med = np.median(values, axis=0)
    ax.errorbar(x, med, yerr=[med - values.min(axis=0), values.max(axis=0) - med], capsize=3,
                **_plot.series(name, COLORS, MARKERS, LINESTYLES), label=label)


def plot(result, outdir):
    names, layers = result["names"], shown_layers(result["names"])
    n_seeds = len(result["seeds"])
    spread = f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"
    config = (f"{result['n_layers']}-block Pre-LN Transformer (d_model 32) on the copy task, "
              f"{result['steps']} Adam steps")
    paths = []
    with _plot.figure(ncols=3, nrows=2, size=(21, 12.5)) as (fig, axes):
        for row, state in zip(axes, ("trained", "init")):
            for ax, i in zip(row, layers):
                dots = _scatter_panel(ax, result, state, i)
        for ax in axes[:, 0]:
            ax.set_ylabel("normalised output x_hat (before gamma, beta)")
        for ax in axes[1]:
            ax.set_xlabel("LayerNorm input x (activation units)")
        fig.colorbar(dots, ax=axes, shrink=0.6, label="std of the element's token / layer's median")
        gain = np.max(result["r2_tanh"] - result["r2_line"])
        fig.suptitle(f"Does LayerNorm act like a tanh? {config}: each LayerNorm's input against its normalised "
                     "output,\n1500 random elements of a held-out batch per panel (first seed). Per token, no: each "
                     "token is a straight line of slope 1/std_token;\nacross tokens the cloud bends only slightly: "
                     f"the tanh fit beats the straight line by at most {gain:.4f} in R$^2$ (every layer, seed and "
                     "state)")
        paths.append(_plot.save(fig, outdir, NAME))
    with _plot.figure(ncols=2, nrows=2, size=(20, 13)) as (fig, ((ax_a, ax_r), (ax_g, ax_s))):
        layer = np.arange(1, len(names) + 1)
        for s, state in enumerate(result["states"]):
            inv_std, alpha_std = np.median(1.0 / result["std"][s], axis=0), result["alpha_std"][s]
            _over_seeds(ax_a, inv_std, result["alpha"][s], state,
                        f"{state}, alpha x std from {alpha_std.min():.2f} to {alpha_std.max():.2f}")
            for fit in ("tanh", "line"):
                _over_seeds(ax_r, layer, result[f"r2_{fit}"][s], f"{state} {fit}",
                            f"{state}, {'c tanh(alpha x)' if fit == 'tanh' else 'straight line a x'}")
            _over_seeds(ax_g, layer, 100 * result["residual_removed"][s], state, state)
            _over_seeds(ax_s, layer, result["token_std_spread"][s], state, state)
        k = np.median(result["alpha_std"])
        grid = np.geomspace(*ax_a.get_xlim(), 50)
        ax_a.plot(grid, k * grid, color=OI["grey"], linestyle=":", marker="", label=f"alpha = {k:.2f} / std")
        ax_a.set(xscale="log", yscale="log", xlabel="1 / std of the layer's input (1 / activation units)",
                 ylabel="fitted alpha (1 / activation units)", title="alpha against 1/std, one point per LayerNorm")
        for axis in (ax_a.xaxis, ax_a.yaxis):
            axis.set_major_formatter(_plot.matplotlib.ticker.FormatStrFormatter("%g"))
            axis.set_minor_formatter(_plot.matplotlib.ticker.FormatStrFormatter("%g"))
        ax_r.set(ylabel="R$^2$ (fraction of the variance of x_hat)", title="Fit quality per LayerNorm")
        ax_g.set(ylabel="% of the line's residual removed", ylim=(0, None),
                 title="What the tanh adds over the straight line")
        ax_s.set(ylabel="token std, 95th / 5th percentile", title="How much the tokens' std differ")
        ticks = [i for i in range(len(names)) if names[i].endswith(".attn") or names[i] == "final"]
        for ax in (ax_r, ax_g, ax_s):
            ax.set_xticks(layer[ticks], [names[i].split(".")[0] if names[i] != "final" else "final" for i in ticks])
            ax.set_xlabel("LayerNorm (block number: before attention; between: before feed-forward)")
        for ax in (ax_a, ax_r, ax_g, ax_s):
            ax.legend(fontsize=13)
        fig.suptitle(f"{config} ({spread}); every LayerNorm's fits on a held-out batch")
        paths.append(_plot.save(fig, outdir, f"{NAME}_alpha"))
    return paths
