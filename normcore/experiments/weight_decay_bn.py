"""Weight decay on scale-invariant weights (van Laarhoven 2017; Zhang et al. 2019; Li & Arora 2019).

A weight matrix W followed by BatchNorm is scale-invariant: the network computes the same function
for W and c W (c > 0). Differentiating L(c W) = L(W) gives grad L(c W) = grad L(W) / c and
W . grad L(W) = 0: the gradient is orthogonal to W. So a plain SGD step W - lr g gives
||W'||^2 = ||W||^2 + lr^2 ||g||^2 -- without decay the norm can only grow, and since the function
depends only on the direction W / ||W||, growing the norm shrinks the effective learning rate
lr / ||W||^2. Weight decay, (1 - lr wd) W, pulls the norm back; the two meet at an equilibrium
norm where lr^2 ||g||^2 = (1 - (1 - lr wd)^2) ||W||^2, so the step relative to the weight,
lr ||g|| / ||W||, settles at about sqrt(2 lr wd) whatever the gradient. Decay on such a weight
does not limit what the network can express; it keeps the effective learning rate up.

Finding (full run, medians of 3 seeds): without decay ||W1|| grows at every one of the 3000
steps (7.95 to 9.34), each step by lr^2 ||g||^2 to a median relative error of 2e-5, and lr / ||W1||^2
falls from 1.6e-3 to 1.15e-3. With decay 0.05 on the weights only, ||W1|| falls to about 2 within
500 steps and stays near it (2.16 at the end); lr / ||W1||^2 rises 13-fold to 2.1e-2, the measured growth and
shrink balance to within 1% over the last quarter, and the relative step settles at 0.0995
against sqrt(2 lr wd) = 0.1. Decaying gamma and beta too drives the first BatchNorm's mean |gamma|
from 1 to 0.09. Scale invariance itself, measured at initialisation: scaling W1 by c from 0.1 to
10 changes the loss by at most 5e-6 (BatchNorm's eps) and c ||grad L(c W1)|| / ||grad L(W1)|| stays
within 5e-5 of 1, while for the head's weight (no norm after it) the loss changes by 6.5% to 345%.

Configuration (chosen, not swept): an MLP, Linear -> BatchNorm1d -> ReLU twice (width 64), then
a Linear head, on the synthetic 10-class teacher task (20 inputs, 4096 training samples), batches
of 64, constant learning rates. The Linear layers before the BatchNorms start with zero bias and
a bias before BatchNorm gets an exactly-zero gradient, so they stay zero and W1, W2 are exactly
scale-invariant (up to eps). Five runs from the same initialisations: plain SGD (no momentum, so
the growth law is exact) at lr 0.1 without decay; with decay 0.05 on the weight matrices only
(``param_groups_no_decay``: gamma, beta and biases excluded); with decay 0.05 on every parameter;
and, for contrast, Adam at lr 0.01 without decay and AdamW with decoupled decay 0.5 on the
weights (the same shrink factor per step, 1 - lr wd = 0.995, as SGD's).

Adam: its per-coordinate normalised step does not shrink as ||W|| grows, so without decay ||W1||
grows much faster (7.95 to 20.8) and the relative step falls 6.6-fold (0.026 to 0.0039); AdamW's
decay holds ||W1|| near 3.6 and the relative step near 0.022. The SGD equilibrium formula does not
apply to it (Adam's step is not orthogonal to W and is not proportional to the gradient).

Measured every step: ||W|| (Frobenius) of both pre-BatchNorm weights, their gradient norms, the
cosine between W and its gradient, ||W_{t+1} - W_t|| / ||W_t||, mean |gamma| of each BatchNorm,
the training loss; held-out accuracy at the end.

What not to conclude: that weight decay improves accuracy here. At a constant learning rate it
does not: held-out accuracy is 0.744 without decay and 0.724 with it (medians), and the training
loss over the last quarter is higher (0.72 against 0.31), since the raised effective learning rate
keeps the training noisy. The papers' accuracy gains come with learning-rate schedules on real
networks, which this toy does not test. Nor that decaying gamma is harmless: here it shrinks the
second layer's inputs until BatchNorm's eps is no longer small against their variance, and W2's
scale invariance visibly breaks (cosine with its gradient up to 0.05, the balance off by 40%).
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d
from ..nn import CrossEntropyLoss
from ..optim import SGD, Adam, AdamW, param_groups_no_decay
from ..perf.threads import single_thread
from . import _plot
from ._nn import mlp, teacher_task
from .warmup import smooth

NAME = "weight_decay_bn"
TITLE = N_("Weight decay on weights before BatchNorm: the norm settles and the effective learning rate stays up")
TAKEAWAY = ("A weight before BatchNorm is scale-invariant, so its gradient is orthogonal to it: without decay "
            "SGD grows its norm at every step and the effective learning rate lr / ||W||^2 falls; with decay the "
            "norm settles within a few hundred steps where lr / ||W||^2 is 13 times higher and the relative step "
            "is sqrt(2 lr wd). Decaying gamma too shrinks it to 0.09. Mechanism only: at a constant learning rate "
            "decay did not improve accuracy here.")

SIZES = (20, 64, 64, 10)
N_TRAIN, N_TEST, BATCH = 4096, 2048, 64
LR, WD = 0.1, 0.05  # SGD: each step shrinks a decayed weight by the factor 1 - LR * WD = 0.995
ADAM_LR, ADAMW_WD = 1e-2, 0.5  # AdamW's decoupled decay: the same factor 1 - ADAM_LR * ADAMW_WD
RUNS = ("sgd", "sgd_wd", "sgd_wd_all", "adam", "adamw")
LABELS = {"sgd": "SGD, no decay", "sgd_wd": "SGD, decay on weights (gamma, beta excluded)",
          "sgd_wd_all": "SGD, decay on all (gamma, beta too)", "adam": "Adam, no decay",
          "adamw": "AdamW, decay on weights"}
_OI = _plot.OKABE_ITO
COLORS = {"sgd": _OI["grey"], "sgd_wd": _OI["blue"], "sgd_wd_all": _OI["vermillion"], "adam": _OI["orange"],
          "adamw": _OI["green"]}
MARKERS = {"sgd": "X", "sgd_wd": "o", "sgd_wd_all": "s", "adam": "^", "adamw": "v"}
LINESTYLES = {"sgd": ":", "sgd_wd": "-", "sgd_wd_all": "--", "adam": "-.", "adamw": (0, (6, 2, 1, 2))}
SCALES = np.array([0.1, 0.5, 2.0, 10.0])


def network(seed):
    """Linear -> BatchNorm1d -> ReLU, twice, then a Linear head; weights N(0, 1/fan_in), biases 0."""
    return mlp(SIZES, "relu", norm=BatchNorm1d, rng=seed)


def pre_norm_weights(model):
    """The weight matrices followed by a BatchNorm (the scale-invariant ones)."""
    layers = list(model)
    return [a.weight for a, b in zip(layers, layers[1:]) if isinstance(b, BatchNorm1d)]


def optimizer(run, model):
    if run == "sgd":
        return SGD(model.parameters(), lr=LR)
    if run == "sgd_wd":
        return SGD(param_groups_no_decay(model, WD), lr=LR)
    if run == "sgd_wd_all":
        return SGD(model.parameters(), lr=LR, weight_decay=WD)
    if run == "adam":
        return Adam(model.parameters(), lr=ADAM_LR)
    if run == "adamw":
        return AdamW(param_groups_no_decay(model, ADAMW_WD), lr=ADAM_LR)
    raise ValueError(f"unknown run {run!r}; expected one of {RUNS}")


def loss_and_grads(model, x, labels):
    """The mean cross entropy on (x, labels) and the pre-BatchNorm weights' gradients (copies);
    every parameter's gradient is this batch's afterwards."""
    model.zero_grad()
    loss_fn = CrossEntropyLoss()
    loss = loss_fn(model(x), labels)
    model.backward(loss_fn.backward())
    return float(loss), [w.grad.copy() for w in pre_norm_weights(model)]


def scale_check(seed):
    """Loss and gradient of the first pre-BatchNorm weight W1 (and, for contrast, of the head's
    weight, which no norm follows) when that weight is multiplied by each c in SCALES.

    Returns relative loss changes |L(cW) - L(W)| / L(W) and the ratios c ||grad(cW)|| / ||grad(W)||
    (1 for a scale-invariant weight), each of shape (2, len(SCALES)): row 0 W1, row 1 the head."""
    model = network(seed)
    x, labels = teacher_task(256, SIZES[0], SIZES[-1], rng=seed + 1)
    targets = [pre_norm_weights(model)[0], list(model)[-1].weight]
    loss0, _ = loss_and_grads(model, x, labels)
    grad0 = [targets[0].grad.copy(), targets[1].grad.copy()]
    change, ratio = np.zeros((2, len(SCALES))), np.zeros((2, len(SCALES)))
    for i, w in enumerate(targets):
        original = w.data.copy()
        for j, c in enumerate(SCALES):
            w.data[...] = c * original
            loss, _ = loss_and_grads(model, x, labels)
            change[i, j] = abs(loss - loss0) / loss0
            ratio[i, j] = c * np.linalg.norm(w.grad) / np.linalg.norm(grad0[i])
        w.data[...] = original
    return change, ratio


@single_thread()
def train(run, steps, seed, data):
    """Train one network with ``run``'s optimizer; the per-step measurements as arrays."""
    (x, y), (x_test, y_test) = data
    model = network(seed)
    opt = optimizer(run, model)
    weights = pre_norm_weights(model)
    gammas = [m.gamma for m in model if isinstance(m, BatchNorm1d)]
    rng = np.random.default_rng(seed + 7)
    out = {key: np.zeros((steps, len(weights))) for key in ("grad_norm", "cosine", "update_norm")}
    out["weight_norm"] = np.zeros((steps + 1, len(weights)))
    out["gamma"] = np.zeros((steps + 1, len(gammas)))
    out["loss"] = np.zeros(steps)
    for t in range(steps + 1):
        w = [p.data.copy() for p in weights]
        out["weight_norm"][t] = [np.linalg.norm(a) for a in w]
        out["gamma"][t] = [np.abs(g.data).mean() for g in gammas]
        if t == steps:
            break
        idx = rng.integers(0, len(x), BATCH)
        out["loss"][t], grads = loss_and_grads(model, x[idx], y[idx])
        out["grad_norm"][t] = [np.linalg.norm(g) for g in grads]
        out["cosine"][t] = [np.sum(a * g) / (np.linalg.norm(a) * np.linalg.norm(g)) for a, g in zip(w, grads)]
        opt.step()
        out["update_norm"][t] = [np.linalg.norm(p.data - a) for p, a in zip(weights, w)]
    model.eval()
    out["test_accuracy"] = float(np.mean(np.argmax(model(x_test), axis=1) == y_test))
    return out


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Every run of RUNS from ``n_seeds`` initialisations; arrays are (runs, seeds, steps[, layers])."""
    quick = flag(quick, "quick", "experiments.weight_decay_bn.run")
    steps, n_seeds = (600, 1) if quick else (3000, 3)
    seeds = [seed + k for k in range(n_seeds)]
    result = {}
    done, total = 0, len(RUNS) * n_seeds
    for s_i, s in enumerate(seeds):
        data = (teacher_task(N_TRAIN, SIZES[0], SIZES[-1], rng=s + 100), teacher_task(N_TEST, SIZES[0], SIZES[-1],
                                                                                       rng=s + 200))
        for r_i, r in enumerate(RUNS):
            out = train(r, steps, s, data)
            for key, value in out.items():
                result.setdefault(key, np.zeros((len(RUNS), n_seeds) + np.shape(value)))[r_i, s_i] = value
            done += 1
            if progress is not None:
                progress(done, total, f"{r} seed {s}")
    change, ratio = scale_check(seed)
    lr = np.array([ADAM_LR if r.startswith("adam") else LR for r in RUNS])
    wd = np.array([{"sgd": 0.0, "adam": 0.0, "adamw": ADAMW_WD}.get(r, WD) for r in RUNS])
    result.update(runs=np.array(RUNS), seeds=np.array(seeds), lr=lr, weight_decay=wd, scales=SCALES,
                  scale_loss_change=change, scale_grad_ratio=ratio,
                  effective_lr=lr[:, None, None, None] / result["weight_norm"] ** 2)
    return result


def _band(ax, steps, curves, run, i):
    """Median over seeds as a line in ``run``'s style, the range over seeds shaded."""
    if len(curves) > 1:
        ax.fill_between(steps, curves.min(axis=0), curves.max(axis=0), color=COLORS[run], alpha=0.2)
    ax.plot(steps, np.median(curves, axis=0), **_plot.series(run, COLORS, MARKERS, LINESTYLES),
            markevery=(len(steps) // 30 * (i + 1), len(steps) // 6), label=LABELS[run])


def plot(result, outdir):
    runs, n_seeds = list(result["runs"]), len(result["seeds"])
    n = result["loss"].shape[-1]
    spread = f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"
    panels = [  # (title, y label, runs drawn, (runs, seeds, steps) values)
        ("weight norm", "||W1||, first weight before BatchNorm", runs, lambda r: r["weight_norm"][..., 0]),
        ("effective learning rate (SGD)", "lr / ||W1||^2", [r for r in runs if r.startswith("sgd")],
         lambda r: r["effective_lr"][..., 0]),
        ("relative step size (every optimizer)", "||W1 step|| / ||W1|| (50-step mean)", runs,
         lambda r: np.apply_along_axis(smooth, -1, r["update_norm"][..., 0] / r["weight_norm"][..., :-1, 0], 50)),
        ("BatchNorm gain", "mean |gamma| of the first BatchNorm", runs, lambda r: r["gamma"][..., 0]),
    ]
    paths = []
    with _plot.figure(ncols=2, nrows=2, size=(20, 14)) as (fig, axes):
        for ax, (title, ylabel, shown, values) in zip(axes.flat, panels):
            curves = values(result)  # (runs, seeds, steps)
            steps = np.arange(curves.shape[-1])
            for i, run in enumerate(runs):
                if run in shown:
                    _band(ax, steps, curves[i], run, i)
            ax.set(title=title, xlabel="training step", ylabel=ylabel, yscale="linear" if "gain" in title else "log")
        eq = np.sqrt(2 * LR * WD)
        axes[1, 0].axhline(eq, color=_plot.OKABE_ITO["black"], linestyle=(0, (1, 3)), linewidth=2, zorder=1,
                           label=f"sqrt(2 lr wd) = {eq:.2g}, SGD's equilibrium")
        axes[1, 0].legend(handles=axes[1, 0].lines[-1:], loc="lower right", fontsize="small")
        axes[1, 1].legend(handles=axes[1, 1].lines, loc="center right", fontsize="small")
        fig.suptitle(f"Linear-BatchNorm-ReLU MLP, {n} steps; SGD lr = {LR:g} (decay {WD:g}), "
                     f"Adam lr = {ADAM_LR:g} (AdamW decay {ADAMW_WD:g}); {spread}")
        paths.append(_plot.save(fig, outdir, NAME))
    paths.append(plot_scale(result, outdir))
    return paths


def plot_scale(result, outdir):
    """Loss change and gradient ratio when a weight is multiplied by c: W1 (before BatchNorm) and the head."""
    c = result["scales"]
    names = ["W1, before BatchNorm", "head weight, no norm after it"]
    styles = [dict(color=_plot.OKABE_ITO["blue"], marker="o", linestyle="-"),
              dict(color=_plot.OKABE_ITO["vermillion"], marker="s", linestyle="--")]
    with _plot.figure(ncols=2, size=(18, 7)) as (fig, (ax_loss, ax_grad)):
        for i, (name, style) in enumerate(zip(names, styles)):
            ax_loss.plot(c, result["scale_loss_change"][i], label=name, markersize=12, **style)
            ax_grad.plot(c, result["scale_grad_ratio"][i], label=name, markersize=12, **style)
        ax_grad.plot(c, c, color=_plot.OKABE_ITO["grey"], linestyle=":", label="c (gradient unchanged)", zorder=1)
        ax_grad.axhline(1.0, color=_plot.OKABE_ITO["black"], linestyle="-.", linewidth=1.5, zorder=1,
                        label="1 (gradient divided by c)")
        ax_loss.set(xscale="log", yscale="log", xlabel="scale factor c", ylabel="|L(cW) - L(W)| / L(W)",
                    title="loss after scaling one weight by c")
        ax_grad.set(xscale="log", yscale="log", xlabel="scale factor c", ylabel="c ||grad L(cW)|| / ||grad L(W)||",
                    title="its gradient, times c")
        ax_loss.legend(loc="center right")
        ax_grad.legend(loc="upper left")
        fig.suptitle("Scale invariance at initialisation: one batch of 256, BatchNorm eps = 1e-5")
        return _plot.save(fig, outdir, f"{NAME}_scale")
