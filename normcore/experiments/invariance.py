"""Invariance properties of BatchNorm, LayerNorm and RMSNorm (Zhang & Sennrich 2019, Table 1).

One layer h = Norm(a) with summed inputs a = x @ W.T (x: (N, d_in), W: (d, d_in)) and the
norm's own random gamma and beta. Each transformation below changes W or x; the layer is
*invariant* to it when h does not change (relative change below 1e-6):

    weight matrix re-scaling      W -> delta * W
    weight matrix re-centering    W -> W + 1 gamma_w^T    (the same row added to every row:
                                                           every unit of a sample shifts equally)
    weight vector re-scaling      W[j] -> delta * W[j]    (one unit's incoming weights)
    dataset re-scaling            x -> delta * x          (every sample)
    dataset re-centering          x -> x + gamma_x        (the same shift for every sample)
    single training case re-scaling   x[0] -> delta * x[0]

BatchNorm normalises each unit over the batch, LayerNorm each sample over its units (mean
and variance), RMSNorm each sample over its units (root mean square, no mean). Which
transformations each one removes follows from what it divides out, and the measured table
must equal the paper's.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, LayerNorm, RMSNorm
from . import _plot

NAME = "invariance"
TITLE = N_("Invariance of BatchNorm, LayerNorm and RMSNorm (Zhang & Sennrich 2019, Table 1)")  # shown as _(TITLE)
TAKEAWAY = ("Measured, not asserted: all three are invariant to re-scaling the weight matrix and the dataset; "
            "only LayerNorm survives weight re-centering, only BatchNorm weight-vector re-scaling and dataset "
            "re-centering, and LayerNorm and RMSNorm single-case re-scaling, as in the paper's Table 1.")

EPS = 1e-12  # a tiny eps, so that what is measured is the algebra, not eps's small distortion
NORMS = {
    "batchnorm": lambda d: BatchNorm1d(d, eps=EPS),
    "layernorm": lambda d: LayerNorm(d, eps=EPS),
    "rmsnorm": lambda d: RMSNorm(d),  # eps=None: machine epsilon
}
TRANSFORMS = [
    "weight matrix re-scaling",
    "weight matrix re-centering",
    "weight vector re-scaling",
    "dataset re-scaling",
    "dataset re-centering",
    "single training case re-scaling",
]
# Zhang & Sennrich (2019), Table 1 (True = invariant), for the three norms measured here.
PAPER = {
    "batchnorm": [True, False, True, True, True, False],
    "layernorm": [True, True, False, True, False, True],
    "rmsnorm": [True, False, False, True, False, True],
}
TOLERANCE = 1e-6


def transformed(name, x, w, rng):
    """(x', W') after the transformation ``name`` with a random factor delta / shift gamma."""
    delta = rng.uniform(2.0, 5.0)
    x, w = x.copy(), w.copy()
    if name == "weight matrix re-scaling":
        w *= delta
    elif name == "weight matrix re-centering":
        w += rng.normal(0, 2.0, w.shape[1])  # the same row vector added to every row
    elif name == "weight vector re-scaling":
        w[0] *= delta
    elif name == "dataset re-scaling":
        x *= delta
    elif name == "dataset re-centering":
        x += rng.normal(0, 2.0, x.shape[1])  # the same shift for every sample
    elif name == "single training case re-scaling":
        x[0] *= delta
    else:
        raise ValueError(f"unknown transformation {name!r}; expected one of {TRANSFORMS}")
    return x, w


def relative_changes(make_norm, n=16, d_in=12, d=10, rng=None):
    """For each of TRANSFORMS, max|h' - h| / max|h| for the layer h = Norm(x @ W.T).

    ``make_norm`` is a callable ``d -> Module`` (a norm over d units, in training mode)."""
    rng = np.random.default_rng(rng)
    norm = make_norm(d)
    for p in norm.parameters():  # random gamma (and beta), so the affine step is exercised too
        p.data[...] = rng.normal(1.0 if p is norm.weight else 0.0, 0.5, p.shape)
    x, w = rng.normal(size=(n, d_in)), rng.normal(size=(d, d_in))
    h = norm(x @ w.T)
    changes = []
    for name in TRANSFORMS:
        x2, w2 = transformed(name, x, w, rng)
        changes.append(np.max(np.abs(norm(x2 @ w2.T) - h)) / np.max(np.abs(h)))
    return np.array(changes)


def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.invariance.run")
    trials = 3 if quick else 20
    result = {"transforms": np.array(TRANSFORMS), "tolerance": TOLERANCE}
    for i, (name, make_norm) in enumerate(NORMS.items()):
        # the largest change over several random layers and transformations
        changes = [relative_changes(make_norm, rng=[seed, t]) for t in range(trials)]
        result[f"{name}/change"] = np.max(changes, axis=0)
        result[f"{name}/invariant"] = result[f"{name}/change"] < TOLERANCE
        if progress:
            progress(i + 1, len(NORMS), name)
    return result


def plot(result, outdir):
    names = list(NORMS)
    invariant = np.array([result[f"{n}/invariant"] for n in names])  # (norms, transforms)
    change = np.array([result[f"{n}/change"] for n in names])
    with _plot.figure(size=(17, 6)) as (fig, ax):
        # light Okabe-Ito blue and orange cells; the tick and cross say it without colour
        yes, no = (0.80, 0.89, 0.96), (0.98, 0.88, 0.70)
        colors = np.where(invariant[..., None], yes, no)
        ax.imshow(colors, aspect="auto")
        for i in range(len(names)):
            for j in range(len(TRANSFORMS)):
                ax.text(j, i - 0.12, "\u2713" if invariant[i, j] else "\u2717", ha="center", va="center",
                        fontsize=40, fontweight="bold",
                        color=_plot.OKABE_ITO["blue" if invariant[i, j] else "vermillion"])
                ax.text(j, i + 0.3, f"change {change[i, j]:.0e}", ha="center", va="center", fontsize=13)
        labels = [t.replace(" re-", "\nre-").replace("training case", "training\ncase") for t in TRANSFORMS]
        ax.set_xticks(range(len(TRANSFORMS)), labels)
        ax.set_yticks(range(len(names)), [_plot.LABELS[n] for n in names])
        ax.set_xticks(np.arange(-0.5, len(TRANSFORMS)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(names)), minor=True)
        ax.grid(False)
        ax.grid(which="minor", color="white", lw=4)
        ax.tick_params(which="both", length=0)
        ax.set_xlabel("transformation of the weights W or the data x (h = Norm(x W^T))")
        ax.set_ylabel("norm")
        patch = _plot.matplotlib.patches.Patch
        handles = [patch(color=yes,
                         label=f"\u2713 invariant: output change < {result['tolerance']:.0e}"),
                   patch(color=no, label="\u2717 not invariant")]
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.32), ncol=2, frameon=False)
        agree = all(list(result[f"{n}/invariant"]) == PAPER[n] for n in names)
        ax.set_title("Measured invariance table" + (" (matches Zhang & Sennrich 2019, Table 1)" if agree
                                                    else " (DIFFERS from Zhang & Sennrich 2019, Table 1)"))
        return [_plot.save(fig, outdir, "invariance_table")]
