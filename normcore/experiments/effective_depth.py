"""Effective depth: what each norm position does to the residual stream as it goes through depth.

The argument (the "Pre-Norm is wider, Post-Norm is deeper" debate): give every residual branch
F_l an output of the same variance as its input, as at initialisation. Then

    Post-Norm  x_{l+1} = LN(x_l + F_l(x_l)) = (x_l + F_l(x_l)) / sqrt(2)
               so x_l = x_0 / 2**(l/2) + sum_k F_k(x_k) / 2**((l-k)/2):
               the input's weight halves every two layers; each layer rewrites the stream.
    Pre-Norm   x_{l+1} = x_l + F_l(LN(x_l)) = x_0 + sum_{k<=l} F_k(LN(x_k))
               x_0 keeps weight 1, |x_l| grows like sqrt(1 + l), and each layer adds a unit
               vector to a growing sum: cos(x_l, x_{l+1}) = sqrt((1 + l) / (2 + l)) -> 1, so
               consecutive layers see almost the same normalised input.

The hypothesis built on this (that Pre-Norm's consecutive layers then act like one wider layer,
so that a deep Pre-Norm model is shallower than it looks) is not measured here: the experiment
measures only its premise, the near-parallel inputs, at initialisation and without training.

The experiment builds exactly that model with normcore's layers: F_l = ``Linear(d, d)`` with
Xavier-normal weights (variance-preserving: Var(F(x)) = Var(x)) and a ``LayerNorm`` without
affine parameters, x_0 ~ N(0, 1). It measures, layer by layer,

    weight of x_0 in x_l     c_l = <x_l, x_0> / <x_0, x_0>   (least squares over all tokens;
                                   the branches' outputs are uncorrelated with x_0)
    cos(x_l, x_{l+1})        per token, averaged
    |x_l|                    the root mean square of x_l's entries
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from ..nn import Linear
from ..norms import LayerNorm
from ..perf.threads import single_thread
from . import _plot
from ._positions import COLORS, LABELS, LINESTYLES, MARKERS

NAME = "effective_depth"
TITLE = N_("Effective depth: Post-Norm forgets its input, Pre-Norm stacks near-identical layers")  # shown as _(TITLE)
TAKEAWAY = ("Post-Norm halves the weight of the input every two layers (2^(-l/2)); in Pre-Norm the "
            "stream's norm grows like sqrt(l) and consecutive layers' inputs become almost parallel "
            "(cosine -> 1). That is the premise of the hypothesis that Pre-Norm's added layers act wider "
            "rather than deeper; the figure measures the premise, at initialisation, not the hypothesis.")

POSITIONS = ("post", "pre")
D_MODEL = 256  # wide: a branch's chance correlation with x_0 is about 1/d


def residual_stream(position, n_layers, n_tokens, seed):
    """x_0, ..., x_L of the variance-preserving residual stack; array (L + 1, n_tokens, d)."""
    rng = np.random.default_rng(seed)
    norm = LayerNorm(D_MODEL, elementwise_affine=False)
    xs = [rng.standard_normal((n_tokens, D_MODEL))]
    for _ in range(n_layers):
        branch = Linear(D_MODEL, D_MODEL, bias=False, init="xavier_normal", rng=rng)
        x = xs[-1]
        xs.append(norm(x + branch(x)) if position == "post" else x + branch(norm(x)))
    return np.stack(xs)


def stream_statistics(xs):
    """(weight of x_0 in each x_l (L+1,), cos(x_l, x_{l+1}) (L,), rms of each x_l (L+1,))."""
    x0 = xs[0]
    weight = np.einsum("ltd,td->l", xs, x0) / np.sum(x0 * x0)
    norms = np.linalg.norm(xs, axis=-1)  # (L+1, tokens)
    cosine = (np.sum(xs[:-1] * xs[1:], axis=-1) / (norms[:-1] * norms[1:])).mean(axis=1)
    rms = np.sqrt(np.mean(xs * xs, axis=(1, 2)))
    return weight, cosine, rms


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.effective_depth.run")
    n_layers = 16
    n_tokens = 256 if quick else 1024
    n_seeds = 3 if quick else 8
    total = len(POSITIONS) * n_seeds
    result = {"layer": np.arange(n_layers + 1), "n_seeds": n_seeds, "d_model": D_MODEL}
    done = 0
    for position in POSITIONS:
        stats = []
        for s in range(n_seeds):
            stats.append(stream_statistics(residual_stream(position, n_layers, n_tokens, seed * 1000 + s)))
            done += 1
            if progress is not None:
                progress(done, total, f"{position} seed {s}")
        weight, cosine, rms = (np.array(a) for a in zip(*stats))
        result[f"{position}_weight"] = weight.mean(axis=0)  # (L+1,)
        result[f"{position}_cosine"] = cosine.mean(axis=0)  # (L,)
        result[f"{position}_rms"] = rms.mean(axis=0)  # (L+1,)
    layer = result["layer"]
    result["theory_post_weight"] = 2.0 ** (-layer / 2)
    result["theory_pre_rms"] = np.sqrt(1.0 + layer)
    result["theory_pre_cosine"] = np.sqrt((1.0 + layer[:-1]) / (2.0 + layer[:-1]))
    return result


def plot(result, outdir):
    layer = result["layer"]
    with _plot.figure(ncols=3, size=(20, 6.5)) as (fig, (ax_w, ax_c, ax_n)):
        for position in POSITIONS:
            style = dict(_plot.series(position, COLORS, MARKERS, LINESTYLES), label=f"{LABELS[position]} (measured)")
            # |weight|: Post-Norm's is positive but tiny at depth, a log axis needs it > 0
            ax_w.plot(layer, np.abs(result[f"{position}_weight"]), **style)
            ax_c.plot(layer[:-1], result[f"{position}_cosine"], **style)
            ax_n.plot(layer, result[f"{position}_rms"], **style)
        dashed = dict(color="black", linestyle=":", linewidth=2.5)
        ax_w.plot(layer, result["theory_post_weight"], label=r"theory $2^{-l/2}$", **dashed)
        ax_c.plot(layer[:-1], result["theory_pre_cosine"], label=r"theory $\sqrt{(1+l)/(2+l)}$", **dashed)
        ax_c.axhline(2 ** -0.5, color="gray", linestyle=(0, (1, 3)), linewidth=2.5, label=r"theory $1/\sqrt{2}$")
        ax_n.plot(layer, result["theory_pre_rms"], label=r"theory $\sqrt{1+l}$", **dashed)
        ax_w.set(yscale="log", xlabel="layer l", ylabel=r"weight of $x_0$ in $x_l$",
                 title="Input's weight in the stream")
        ax_c.set(xlabel="layer l", ylabel=r"cos($x_l$, $x_{l+1}$)", title="Consecutive layers' inputs",
                 ylim=(0.6, 1.02))
        ax_n.set(xlabel="layer l", ylabel=r"RMS of $x_l$", title="Norm of the stream")
        for ax in (ax_w, ax_c, ax_n):
            ax.legend(loc="best")
        fig.suptitle(f"Effective depth: residual stack with variance-preserving branches "
                     f"(d = {result['d_model']}, mean of {result['n_seeds']} seeds)")
        return [_plot.save(fig, outdir, NAME)]
