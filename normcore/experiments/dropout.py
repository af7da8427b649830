"""Dropout: the 1/(1 - p) scale keeps the expectation, and without it training and evaluation disagree.

Part 1 measures E[Dropout(x)] / x over many masks for every p, for normcore's inverted
``Dropout`` and for the same layer with the scale removed (``UnscaledDropout``, the mistake:
``y = x * mask`` in training, ``y = x`` in evaluation).

Part 2 trains a regression MLP (Linear -> ReLU -> Dropout -> Linear, mean squared error, SGD)
with each variant, then predicts in evaluation mode. Unscaled, the next layer is trained on
activations that are (1 - p) times smaller on average than those it sees at evaluation, so its
predictions come out about 1/(1 - p) times too large; inverted dropout has no such mismatch.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import Dropout, MSELoss, ReLU, Sequential
from ..perf.threads import single_thread
from . import _plot
from ._nn import linear, sgd

NAME = "dropout"
TITLE = N_("Inverted dropout keeps the expectation; without 1/(1-p) train and eval disagree")  # shown as _(TITLE)
TAKEAWAY = ("Inverted dropout keeps E[y] = x for every p; drop the 1/(1-p) scale and the expectation shrinks "
            "to (1-p) x in training, so a trained network's evaluation outputs come out about 1/(1-p) too large.")

PS = (0.1, 0.3, 0.5, 0.7, 0.9)
VARIANTS = {"inverted": "inverted dropout: x * mask / (1-p)", "unscaled": "no scale: x * mask (the mistake)"}
COLORS = {"inverted": _plot.OKABE_ITO["blue"], "unscaled": _plot.OKABE_ITO["vermillion"]}
MARKERS = {"inverted": "o", "unscaled": "s"}
LINESTYLES = {"inverted": "-", "unscaled": "--"}


class UnscaledDropout(Dropout):
    """Dropout *without* the 1/(1 - p) scale: y = x * mask in training, y = x in evaluation.
    The mistake this experiment measures; use ``Dropout``."""

    scale = property(lambda self: 1.0)


DROPOUTS = {"inverted": Dropout, "unscaled": UnscaledDropout}


def expectation_ratio(dropout, p, draws, rng):
    """mean(Dropout(x)) / mean(x) over ``draws`` masks of a positive x (training mode)."""
    x = rng.uniform(0.5, 1.5, (draws, 1000))
    return float(DROPOUTS[dropout](p, rng=rng)(x).mean() / x.mean())


def regression_task(n, rng, dim=10):
    """x ~ N(0, I), target = a fixed smooth function of x with unit scale."""
    x = rng.normal(size=(n, dim))
    w = np.random.default_rng(77).normal(size=(dim,)) / np.sqrt(dim)
    return x, np.tanh(x @ w)[:, None] + 0.5 * (x @ w)[:, None]


def train_regression(dropout, p, steps, rng, width=128, lr=0.05, batch=64):
    """Train Linear -> ReLU -> Dropout(p) -> Linear on the regression task by SGD on the mean
    squared error; return (eval predictions, targets) on held-out data."""
    rng = np.random.default_rng(rng)
    x, t = regression_task(4000, rng)
    x_test, t_test = regression_task(1000, rng)
    model = Sequential(linear(x.shape[1], width, x.shape[1] ** -0.5, rng), ReLU(), DROPOUTS[dropout](p, rng=rng),
                       linear(width, 1, width ** -0.5, rng))
    optimizer, loss = sgd(model, lr), MSELoss()
    for _ in range(steps):
        idx = rng.integers(0, len(x), batch)
        loss(model(x[idx]), t[idx])
        model.backward(loss.backward())
        optimizer.step()
        optimizer.zero_grad()
    return model.eval()(x_test)[:, 0], t_test[:, 0]


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.dropout.run")
    draws, steps, train_ps = ((50, 600, (0.3, 0.5, 0.7)) if quick
                              else (500, 3000, (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)))
    rng = np.random.default_rng([seed, 3])
    result = {"ps": np.array(PS), "train_ps": np.array(train_ps)}
    total, done = 2 * (len(PS) + len(train_ps)), 0
    for v in VARIANTS:
        result[f"{v}/expectation_ratio"] = np.array([expectation_ratio(v, p, draws, rng) for p in PS])
        done += len(PS)
        mse, slope = [], []
        for p in train_ps:
            pred, target = train_regression(v, p, steps, [seed, int(100 * p)])
            mse.append(np.mean((pred - target) ** 2))
            slope.append(np.dot(pred, target) / np.dot(target, target))  # least-squares pred ~ slope * target
            if p == 0.5:
                result[f"{v}/pred_p05"], result[f"{v}/target_p05"] = pred, target
            done += 1
            if progress:
                progress(done, total, f"{v}, p={p}")
        result[f"{v}/eval_mse"], result[f"{v}/eval_slope"] = np.array(mse), np.array(slope)
    return result


def plot(result, outdir):
    paths = []
    ps = result["ps"]
    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for v, label in VARIANTS.items():
            ax1.plot(ps, result[f"{v}/expectation_ratio"], **_plot.series(v, COLORS, MARKERS, LINESTYLES),
                     label=label)
        ax1.plot(ps, 1 - ps, "k:", lw=2, label="1 - p")
        ax1.set(title="Training mode: E[y] / x over many masks", xlabel="dropout probability p",
                ylabel="mean(Dropout(x)) / mean(x)", ylim=(0, 1.15))
        ax1.legend(loc="lower left")
        tp = result["train_ps"]
        for v, label in VARIANTS.items():
            ax2.plot(tp, result[f"{v}/eval_slope"], **_plot.series(v, COLORS, MARKERS, LINESTYLES), label=label)
        ax2.plot(tp, 1 / (1 - tp), "k:", lw=2, label="1 / (1 - p)")
        ax2.set(title="After training: evaluation-mode outputs", xlabel="dropout probability p",
                ylabel="prediction / target (fitted slope)")
        ax2.legend(loc="upper left")
        fig.suptitle("Inverted dropout keeps the expectation; without 1/(1-p) training and evaluation disagree")
        paths.append(_plot.save(fig, outdir, "dropout_expectation"))

    if "inverted/pred_p05" in result:
        with _plot.figure(ncols=2, size=(15, 7), sharey=True) as (fig, axes):
            for ax, v in zip(axes, VARIANTS):
                t, pr = result[f"{v}/target_p05"], result[f"{v}/pred_p05"]
                ax.scatter(t, pr, s=12, alpha=0.5, color=COLORS[v], marker=MARKERS[v], label="held-out samples")
                lim = np.array([t.min(), t.max()])
                ax.plot(lim, lim, "k--", lw=2, label="prediction = target")
                ax.plot(lim, 2 * lim, "k:", lw=2, label="prediction = 2 x target")
                mse = result[f"{v}/eval_mse"][list(result["train_ps"]).index(0.5)]
                ax.set(title=f"{VARIANTS[v]}\nevaluation MSE {mse:.3f}", xlabel="target")
                ax.legend(loc="upper left")
            axes[0].set_ylabel("prediction in evaluation mode")
            fig.suptitle("A regression MLP trained with dropout p = 0.5, then evaluated")
            paths.append(_plot.save(fig, outdir, "dropout_train_eval"))
    return paths
