"""The gradient is orthogonal to the weight: WeightNorm's direction v and a weight before BatchNorm.

Both make the loss independent of a weight's scale: WeightNorm (Salimans & Kingma 2016) by
construction, w = g * v / ||v|| (scaling v changes nothing), BatchNorm because it divides by the
batch's standard deviation (scaling W scales it too). Differentiating L(c v) = L(v) in c gives
v . grad L(v) = 0, and for WeightNorm the backward makes it explicit: grad_v = (g / ||v||)
(I - v v^T / ||v||^2) grad_w, a projection. So a plain SGD step v - lr g is Pythagoras:
||v'||^2 = ||v||^2 + lr^2 ||g||^2, the norm only grows, and the step the direction v / ||v||
takes is lr / ||v||^2 times the gradient at unit norm: the effective learning rate falls.

Three networks from the same initialisation (Linear -> [norm] -> ReLU twice, width 64, a Linear
head; the synthetic 10-class teacher task, batches of 64, plain SGD at lr 0.1 without decay;
the weight_decay_bn experiment's configuration and, for BatchNorm, its training loop):
**BatchNorm** (Linear -> BatchNorm1d -> ReLU), **WeightNorm** (each hidden Linear wrapped in
``WeightNorm(dim=0)``, no activation norm) and, for contrast, the **plain** MLP. Measured every
step for the first hidden layer's matrix (W1 before BatchNorm, v1 of WeightNorm, W1 of the plain
MLP): the cosine between it and its gradient, ||.||^2's growth against lr^2 ||grad||^2, and lr /
||.||^2.

Finding (full run, 2000 steps, 3 seeds): |cosine| is at most 3e-17 for WeightNorm's v1 (rounding)
and 4e-7 for W1 before BatchNorm (eps); each step's growth of ||.||^2 matches lr^2 ||grad||^2 to
a relative 4e-11 and 1e-4 at worst; ||.|| grows from 7.9-8.1 to 8.8-9.0 and lr / ||.||^2 falls
from 1.58e-3 to 1.25e-3-1.30e-3. The plain MLP's W1: cosine up to 0.18 (median 0.011), its norm
shrinks at 10% of the steps and grows faster overall (to 10.3).

What it does not show: that the falling effective learning rate hurts or helps training (see
weight_decay_bn for what weight decay does to it), nor WeightNorm's data-dependent
initialisation, which Salimans & Kingma use and normcore does not implement.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import WeightNorm
from ..module import Sequential
from ..nn import CrossEntropyLoss, Linear
from ..optim import SGD
from ..perf.threads import single_thread
from . import _plot, weight_decay_bn as wdbn
from ._nn import mlp, teacher_task

NAME = "grad_weight"
# shown as _(TITLE)
TITLE = N_("The gradient is orthogonal to the weight: WeightNorm, BatchNorm, and the effective learning rate")
TAKEAWAY = ("Inside WeightNorm and before BatchNorm a weight's gradient is orthogonal to it (|cosine| at most 3e-17 "
            "and 4e-7), so without decay every plain SGD step grows ||w||^2 by lr^2 ||g||^2 (to a relative 4e-11 "
            "and 1e-4) and the effective learning rate lr / ||w||^2 only falls, here by about a fifth in 2000 "
            "steps; a weight no norm follows obeys no such law (cosine up to 0.18, its norm shrinking at 10% of "
            "the steps).")

NETWORKS = ("batchnorm", "weightnorm", "plain")
LABELS = {"batchnorm": "W1 before BatchNorm", "weightnorm": "v1 of WeightNorm (dim=0)",
          "plain": "W1 of the plain MLP (no norm)"}
_OI = _plot.OKABE_ITO
COLORS = {"batchnorm": _OI["blue"], "weightnorm": _OI["green"], "plain": _OI["grey"]}
MARKERS = {"batchnorm": "o", "weightnorm": "^", "plain": "X"}
LINESTYLES = {"batchnorm": "-", "weightnorm": "--", "plain": ":"}


def network(kind, seed):
    """The network ``kind`` from initialisation ``seed`` and its first hidden layer's matrix (the
    Parameter measured). WeightNorm and the plain MLP start from the plain MLP's weights."""
    if kind == "batchnorm":
        model = wdbn.network(seed)
        return model, wdbn.pre_norm_weights(model)[0]
    model = mlp(wdbn.SIZES, "relu", rng=seed)
    if kind == "plain":
        return model, model[0].weight
    layers = [WeightNorm(m) if isinstance(m, Linear) and i < len(model) - 1 else m for i, m in enumerate(model)]
    return Sequential(*layers), layers[0].weight_v


@single_thread()
def train(kind, steps, seed, data):
    """Plain SGD on ``kind``'s network; per step the measured matrix's norm (steps + 1,), its
    gradient's norm and the cosine between the two (steps,)."""
    if kind == "batchnorm":  # weight_decay_bn's loop, the same batches
        out = wdbn.train("sgd", steps, seed, data)
        return {key: out[key][:, 0] for key in ("weight_norm", "grad_norm", "cosine")}
    (x, y), _ = data
    model, w = network(kind, seed)
    opt = SGD(model.parameters(), lr=wdbn.LR)
    rng = np.random.default_rng(seed + 7)
    out = {"weight_norm": np.zeros(steps + 1), "grad_norm": np.zeros(steps), "cosine": np.zeros(steps)}
    for t in range(steps):
        before = w.data.copy()
        out["weight_norm"][t] = np.linalg.norm(before)
        idx = rng.integers(0, len(x), wdbn.BATCH)
        model.zero_grad()
        loss_fn = CrossEntropyLoss()
        loss_fn(model(x[idx]), y[idx])
        model.backward(loss_fn.backward())
        g = w.grad
        out["grad_norm"][t] = np.linalg.norm(g)
        out["cosine"][t] = np.sum(before * g) / (np.linalg.norm(before) * np.linalg.norm(g))
        opt.step()
    out["weight_norm"][steps] = np.linalg.norm(w.data)
    return out


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Every network from ``n_seeds`` initialisations; ``NETWORK/KEY`` arrays are (seeds, steps[+1])."""
    quick = flag(quick, "quick", "experiments.grad_weight.run")
    steps, n_seeds = (300, 1) if quick else (2000, 3)
    result = {"steps": steps, "seeds": n_seeds, "lr": wdbn.LR}
    done = 0
    for s in range(seed, seed + n_seeds):
        data = tuple(teacher_task(n, wdbn.SIZES[0], wdbn.SIZES[-1], rng=s + k) for n, k in ((wdbn.N_TRAIN, 100),
                                                                                              (256, 200)))
        for kind in NETWORKS:
            for key, value in train(kind, steps, s, data).items():
                result.setdefault(f"{kind}/{key}", []).append(value)
            done += 1
            if progress:
                progress(done, n_seeds * len(NETWORKS), f"{kind}, seed {s}")
    for kind in NETWORKS:
        for key in ("weight_norm", "grad_norm", "cosine"):
            result[f"{kind}/{key}"] = np.array(result[f"{kind}/{key}"])
        norm = result[f"{kind}/weight_norm"]
        result[f"{kind}/growth"] = np.diff(norm ** 2, axis=1)                         # measured
        result[f"{kind}/pythagoras"] = (wdbn.LR * result[f"{kind}/grad_norm"]) ** 2   # if orthogonal
        result[f"{kind}/effective_lr"] = wdbn.LR / norm ** 2
    return result


def plot(result, outdir):
    n_seeds, lr = result["seeds"], result["lr"]
    invariant = ("batchnorm", "weightnorm")  # lr / ||w||^2 is an effective learning rate only for these
    panels = [  # (title, y label, y scale, networks drawn, values)
        ("W . grad = 0 with a norm", "|cosine(weight, its gradient)|", "log", NETWORKS,
         lambda k: np.abs(result[f"{k}/cosine"]) + 1e-18),
        ("each step: Pythagoras", "||.||^2 growth / (lr^2 ||grad||^2)", "linear", NETWORKS,
         lambda k: result[f"{k}/growth"] / result[f"{k}/pythagoras"]),
        ("without decay the norm only grows", "||weight|| (Frobenius)", "linear", NETWORKS,
         lambda k: result[f"{k}/weight_norm"]),
        ("so the effective learning rate falls", "lr / ||weight||^2", "log", invariant,
         lambda k: result[f"{k}/effective_lr"]),
    ]
    with _plot.figure(ncols=2, nrows=2, size=(20, 13)) as (fig, axes):
        for ax, (title, ylabel, scale, shown, values) in zip(axes.flat, panels):
            for i, kind in enumerate(shown):
                curves = values(kind)                          # (seeds, steps)
                steps = np.arange(curves.shape[1])
                style = _plot.series(kind, COLORS, MARKERS, LINESTYLES, markersize=11)
                if kind == "plain" and "Pythagoras" in title:  # a cloud, not a line
                    style.update(linestyle="none", markersize=3)
                ax.plot(steps, np.median(curves, axis=0), **style, label=LABELS[kind],
                        markevery=1 if style["linestyle"] == "none" else (len(steps) // 25 * (i + 1), len(steps) // 6))
            ax.set(title=title, ylabel=ylabel, yscale=scale, xlabel="SGD step")
        axes[0, 1].set_ylim(-1, 3)
        axes[0, 1].axhline(1, color=_OI["black"], linewidth=1.5, zorder=1)
        axes[0, 0].legend(loc="center right")
        spread = f"median of {n_seeds} seeds" if n_seeds > 1 else "one seed"
        fig.suptitle(f"MLP width 64, plain SGD lr {lr:g}, no weight decay ({spread}); the first hidden "
                     "layer's matrix\n1e-18 added to the cosine so that an exact 0 shows")
        return [_plot.save(fig, outdir, NAME)]
