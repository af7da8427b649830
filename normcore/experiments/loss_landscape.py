"""The loss landscape with and without BatchNorm (Santurkar et al. 2018, Figure 4), at laptop scale.

An 8-layer ReLU MLP (Linear -> [BatchNorm] -> ReLU, width 64, He-initialised weights) learns
the synthetic 10-class task (``teacher_task``) by plain SGD, batches of 64, the same learning
rate with and without BatchNorm. Every few steps we stop and look along the gradient g of the
current batch: for step sizes eta from a quarter of the learning rate to four times it we put
the weights at w - eta g, and measure on the same batch (BatchNorm in training mode, the
batch's own statistics, as during the step)

* the loss L(w - eta g): how much it varies over the step sizes (its max minus its min,
  L(w) included) is the *loss variation*;
* the gradient there: ||grad L(w - eta g) - grad L(w)||, largest over the step sizes, is the
  *gradient change* (the paper's "gradient predictiveness": small means the gradient here
  still says where the loss goes a step away);
* the largest ratio ||grad L(w - eta g) - grad L(w)|| / ||eta g||, the *effective
  beta-smoothness* (a local Lipschitz constant of the gradient along g).

Then the weights are restored (and the running statistics, which the probing forwards would
otherwise update) and training takes its ordinary step.

What it shows (the full run, 3 seeds, medians over the probes after the first 20% of
training): with BatchNorm the gradient changes about three times less along the step (2.1
against 6.3) and the loss varies about a quarter less (0.51 against 0.68). BatchNorm's
gradients are about a fifth shorter here (2.0 against 2.5), so its steps are shorter too,
which accounts for only a small part of the threefold difference. The effective
beta-smoothness is also lower with BatchNorm in the full run (12.6 against 17.3), but only
after the first few hundred steps, where BatchNorm's starts higher; the quick run the tests
use is too short to show that, so no test asserts it. The landscape is smoother along the
direction training actually takes, here at a far smaller scale than the paper's VGG on
CIFAR-10.
What not to conclude: this is the measurement the paper makes, not a proof of why BatchNorm
helps; Santurkar et al. also show that BatchNorm's benefit survives noise injected to
*increase* covariate shift, and that part is not reproduced here.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d
from ..perf.threads import single_thread
from ..nn import CrossEntropyLoss
from . import _plot
from ._nn import mlp, teacher_task

NAME = "loss_landscape"
TITLE = N_("The loss landscape along the gradient, with and without BatchNorm")  # shown as _(TITLE)
TAKEAWAY = ("Along the gradient of an 8-layer ReLU MLP at the same learning rate, with BatchNorm the gradient "
            "changes about three times less and the loss varies about a quarter less, as Santurkar et al. (2018) "
            "measured on a VGG network: a smoother landscape along the direction training takes.")

NORMS = {"none": None, "batchnorm": BatchNorm1d}
DEPTH, WIDTH, BATCH, LR = 8, 64, 64, 0.1
MULTIPLES = (0.25, 0.5, 1.0, 2.0, 4.0)  # the step sizes eta, in units of the learning rate
SKIP = 0.2  # the summaries leave out the first 20% of training, where every network changes fastest


def loss_and_gradient(model, x, labels):
    """The mean cross entropy on (x, labels) and its gradient, all parameters as one flat vector."""
    loss_fn = CrossEntropyLoss()
    model.zero_grad()
    with np.errstate(over="ignore", invalid="ignore"):
        loss = loss_fn(model(x), labels)
        model.backward(loss_fn.backward())
    return float(loss), np.concatenate([p.grad.ravel() for p in model.parameters()])


def _set(params, flat):
    """Write the flat vector ``flat`` into the parameters, in order."""
    start = 0
    for p in params:
        p.data[...] = flat[start:start + p.data.size].reshape(p.data.shape)
        start += p.data.size


def probe(model, x, labels, lr, multiples=MULTIPLES):
    """Look along the gradient of the batch (x, labels) and put the model back as it was.

    Returns (loss at w, gradient at w, losses (M,), gradient changes (M,), step lengths (M,))
    for the step sizes eta = multiples * lr.
    """
    params = model.parameters()
    state = model.state_dict()  # the weights and the running statistics
    w = np.concatenate([p.data.ravel() for p in params])
    loss0, grad0 = loss_and_gradient(model, x, labels)
    losses, changes, lengths = [], [], []
    for m in multiples:
        _set(params, w - m * lr * grad0)
        loss, grad = loss_and_gradient(model, x, labels)
        losses.append(loss)
        changes.append(np.linalg.norm(grad - grad0))
        lengths.append(m * lr * np.linalg.norm(grad0))
    model.load_state_dict(state)
    return loss0, grad0, np.array(losses), np.array(changes), np.array(lengths)


def train(norm, steps, every, data, rng, on_step=None):
    """Train by SGD for ``steps`` steps, probing the landscape every ``every`` steps.

    Returns dict: ``steps`` (K,), ``loss`` (K,), ``loss_min``, ``loss_max`` (K,) of the losses
    along the gradient (L(w) included), ``grad_change`` (K, M), ``smoothness`` (K,) the largest
    ratio change / step length, ``grad_norm`` (K,).
    """
    x, labels = data
    rng = np.random.default_rng(rng)
    model = mlp([x.shape[1]] + [WIDTH] * DEPTH + [10], "relu", norm, std=(2 / WIDTH) ** 0.5, rng=rng)
    params = model.parameters()
    record = {k: [] for k in ("steps", "loss", "loss_min", "loss_max", "grad_change", "smoothness", "grad_norm")}
    for step in range(steps):
        idx = rng.integers(0, len(x), BATCH)
        if step % every == 0:
            loss0, grad, losses, changes, lengths = probe(model, x[idx], labels[idx], LR)
            record["steps"].append(step)
            record["loss"].append(loss0)
            record["loss_min"].append(min(loss0, losses.min()))
            record["loss_max"].append(max(loss0, losses.max()))
            record["grad_change"].append(changes)
            record["smoothness"].append(np.max(changes / lengths))
            record["grad_norm"].append(np.linalg.norm(grad))
        else:
            _, grad = loss_and_gradient(model, x[idx], labels[idx])
        start = 0
        for p in params:  # the SGD step, from the gradient of this batch
            p.data -= LR * grad[start:start + p.data.size].reshape(p.data.shape)
            start += p.data.size
        if on_step:
            on_step()
    return {k: np.array(v) for k, v in record.items()}


def summary(record, skip=SKIP):
    """Medians over the probes after the first ``skip`` of training: loss variation, largest
    gradient change, effective beta-smoothness, gradient norm."""
    keep = record["steps"] >= skip * (record["steps"][-1] + 1)
    return {
        "loss_variation": float(np.median((record["loss_max"] - record["loss_min"])[keep])),
        "grad_change": float(np.median(record["grad_change"][keep].max(axis=1))),
        "smoothness": float(np.median(record["smoothness"][keep])),
        "grad_norm": float(np.median(record["grad_norm"][keep])),
    }


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.loss_landscape.run")
    steps, every, seeds = (200, 20, 1) if quick else (1200, 20, 3)
    data = teacher_task(20000, rng=np.random.default_rng([seed, 31]))
    total, done = len(NORMS) * seeds * steps, [0]
    result = {"lr": LR, "multiples": np.array(MULTIPLES), "depth": DEPTH, "skip": SKIP}

    for name, norm in NORMS.items():
        def on_step(label=name):
            done[0] += 1
            if progress and done[0] % 50 == 0:
                progress(done[0], total, label)

        runs = [train(norm, steps, every, data, [seed, s], on_step) for s in range(seeds)]
        result["steps"] = runs[0]["steps"]
        for key in ("loss", "loss_min", "loss_max", "smoothness", "grad_norm"):
            result[f"{name}/{key}"] = np.array([r[key] for r in runs])  # (seeds, K)
        result[f"{name}/grad_change"] = np.array([r["grad_change"] for r in runs])  # (seeds, K, M)
        for key in ("loss_variation", "grad_change", "smoothness", "grad_norm"):
            result[f"{name}/median_{key}"] = np.array([summary(r)[key] for r in runs])  # (seeds,)
    if progress:
        progress(total, total, "done")
    return result


def plot(result, outdir):
    steps = result["steps"]
    styles = {"none": dict(ls="--", marker=None), "batchnorm": dict(ls="-", marker=None)}
    with _plot.figure(ncols=3, size=(22, 6.8)) as (fig, (ax1, ax2, ax3)):
        for name in NORMS:
            color, label = _plot.COLORS[name], _plot.LABELS[name]
            lo, hi = result[f"{name}/loss_min"][0], result[f"{name}/loss_max"][0]
            ax1.fill_between(steps, lo, hi, color=color, alpha=0.3,
                             hatch="//" if name == "none" else None, label=f"{label}: min to max over eta, seed 0")
            change = result[f"{name}/grad_change"][0]  # (K, M), first seed
            ax2.fill_between(steps, change.min(axis=1), change.max(axis=1), color=color, alpha=0.3,
                             hatch="//" if name == "none" else None, label=f"{label}: min to max over eta, seed 0")
            smooth = result[f"{name}/smoothness"]
            ax3.plot(steps, np.median(smooth, axis=0), color=color, **styles[name],
                     label=f"{label}: median of {len(smooth)} seeds, band: min to max")
            if len(smooth) > 1:
                ax3.fill_between(steps, smooth.min(axis=0), smooth.max(axis=0), color=color, alpha=0.2)
        m = result["multiples"]
        ax1.set(title=f"Loss a step eta = {m[0]:g} to {m[-1]:g} lr away", xlabel="training step",
                ylabel="loss L(w - eta g)\n(cross-entropy, nats)")
        ax2.set(title="Gradient change along the gradient", xlabel="training step",
                ylabel="||grad L(w - eta g) - grad L(w)||\n(nats per unit of weight)")
        ax3.set(title="Effective beta-smoothness", xlabel="training step",
                ylabel="gradient change / ||eta g||, largest over eta\n(nats per unit of weight squared)")
        for ax in (ax1, ax2, ax3):
            ax.legend(loc="upper right")
        fig.suptitle(f"Along the gradient g: {result['depth']}-layer ReLU MLP, SGD at lr {result['lr']:g} "
                     "(Santurkar et al. 2018, Fig. 4)")
        return [_plot.save(fig, outdir, "loss_landscape")]
