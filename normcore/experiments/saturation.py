"""Saturation: large weights drive tanh units into their flat tails; a norm before the
activation keeps the pre-activations near N(0, 1) and the gradients the same size in every layer.

A deep tanh MLP (Linear -> [norm] -> tanh, weights ~ N(0, 1), i.e. sqrt(fan_in) times the usual
1/sqrt(fan_in) scale) sees one batch; we record each layer's pre-activations z (the tanh
inputs), the fraction of saturated units (|tanh(z)| > 0.99, where tanh'(z) < 0.02) and the
norm of each Linear weight's gradient under a cross-entropy loss.

Without a norm the gradients do not vanish, as saturation alone would suggest: they explode
toward the input. Going one layer down, the gradient is multiplied by W^T (entries N(0, 1):
it grows by about sqrt(width), 16 at width 256) and by tanh'(z) (below 0.02 for the saturated
units). Its norm changes by about sqrt(width) * rms(tanh'(z)) per layer, the ``gain`` recorded
here: with 87% of the units saturated the few unsaturated ones still pass enough for a gain of
about 3, so the first layer's gradient is millions of times the last one's. Had the gain been
below 1 the same product would have made them vanish toward the input; this experiment does
not show that case.
"""

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import BatchNorm1d, CrossEntropyLoss, LayerNorm, Linear, Tanh
from ..perf.threads import single_thread
from . import _plot
from ._nn import forward_recording, mlp, teacher_task

NAME = "saturation"
TITLE = N_("Saturation of a deep tanh MLP with large weights")  # shown as _(TITLE)
TAKEAWAY = ("With large weights most tanh units sit in their flat tails, yet the gradients do not vanish: "
            "they explode toward the input, growing by a nearly constant factor per layer (the weights' scale "
            "outweighs the tails' small slopes), to millions of times the last layer's; BatchNorm or LayerNorm "
            "before the activation keeps almost every unit in the linear range and the gradients the same "
            "size in every layer.")

NORMS = {"none": None, "batchnorm": BatchNorm1d, "layernorm": LayerNorm}
SATURATED = 0.99  # |tanh(z)| above this counts as saturated (|z| > 2.65, tanh'(z) < 0.02)
BINS = np.linspace(-30, 30, 121)


def measure(norm, depth=10, width=128, batch=256, weight_std=1.0, norm_after=False, rng=None):
    """One forward and backward pass of the deep tanh MLP; returns per-layer arrays.

    ``norm`` is None or a layer class (``width -> Module``); with ``norm_after=True`` it is put
    after the activation instead of before it (the wrong place, for comparison).
    Returns dict: ``pre`` (depth, batch, width) tanh inputs, ``saturated`` (depth,) fraction of
    saturated units, ``grad_norm`` (depth + 1,) Frobenius norm of each Linear weight's gradient,
    ``gain`` (depth,) sqrt(width) * weight_std * rms(tanh'(z)) per hidden layer: the factor by which
    the gradient's norm grows going down through that layer's tanh and the next Linear.
    """
    rng = np.random.default_rng(rng)
    model = mlp([20] + [width] * depth + [10], "tanh", norm, std=weight_std, rng=rng, norm_after=norm_after)
    x, labels = teacher_task(batch, rng=rng)
    logits, pre = forward_recording(model, x, Tanh)
    loss = CrossEntropyLoss()
    loss(logits, labels)
    model.backward(loss.backward())
    pre = np.stack(pre)  # (depth, batch, width) the tanh inputs
    saturated = np.mean(np.abs(np.tanh(pre)) > SATURATED, axis=(1, 2))  # (depth,)
    grad_norm = np.array([np.linalg.norm(m.weight.grad) for m in model if isinstance(m, Linear)])
    slope = 1.0 - np.tanh(pre) ** 2  # (depth, batch, width) tanh'(z)
    gain = np.sqrt(width) * weight_std * np.sqrt(np.mean(slope ** 2, axis=(1, 2)))  # (depth,)
    return {"pre": pre, "saturated": saturated, "grad_norm": grad_norm, "gain": gain}


@single_thread()
def run(quick=False, seed=0, progress=None):
    quick = flag(quick, "quick", "experiments.saturation.run")
    depth, width, batch, seeds = (10, 128, 256, 1) if quick else (16, 256, 512, 4)
    result = {"depth": depth, "width": width, "bins": BINS}
    total, done = len(NORMS) * seeds, 0
    for name, norm in NORMS.items():
        runs = []
        for s in range(seeds):
            runs.append(measure(norm, depth, width, batch, rng=[seed, s]))
            done += 1
            if progress:
                progress(done, total, f"{name}, seed {s}")
        result[f"{name}/saturated"] = np.mean([r["saturated"] for r in runs], axis=0)
        result[f"{name}/grad_norm"] = np.exp(np.mean([np.log(r["grad_norm"]) for r in runs], axis=0))
        result[f"{name}/gain"] = np.mean([r["gain"] for r in runs], axis=0)
        # histogram (density) of each layer's pre-activations, all seeds pooled
        pre = np.concatenate([r["pre"] for r in runs], axis=1)
        counts = np.stack([np.histogram(p, BINS)[0] for p in pre])  # (depth, bins)
        result[f"{name}/hist"] = counts / (pre[0].size * np.diff(BINS))  # density; tails beyond +-30 not drawn
        result[f"{name}/pre_std"] = pre.std(axis=(1, 2))
    return result


# The histograms' layers, first to last: dark palette colours, each with its own line style (a
# light colour, as a colormap's yellow end, would vanish on the white background).
LAYER_COLORS = [_plot.OKABE_ITO["black"], _plot.OKABE_ITO["blue"], _plot.OKABE_ITO["green"],
                _plot.OKABE_ITO["vermillion"]]
LAYER_STYLES = ["-", "--", "-.", ":"]


def plot(result, outdir):
    depth = result["depth"]
    layers = sorted({0, 1, depth // 2 - 1, depth - 1})
    centers = 0.5 * (result["bins"][1:] + result["bins"][:-1])
    cut = np.arctanh(SATURATED)
    paths = []
    with _plot.figure(ncols=3, size=(18, 6.5), sharey=True) as (fig, axes):
        for ax, name in zip(axes, NORMS):
            for k, layer in enumerate(layers):
                ax.plot(centers, result[f"{name}/hist"][layer], color=LAYER_COLORS[k % 4],
                        linestyle=LAYER_STYLES[k % 4], label=f"layer {layer + 1}")
            ax.axvspan(result["bins"][0], -cut, color=_plot.OKABE_ITO["vermillion"], alpha=0.12)
            ax.axvspan(cut, result["bins"][-1], color=_plot.OKABE_ITO["vermillion"], alpha=0.12,
                       label="saturated (|tanh| > 0.99)")
            ax.set_title(_plot.LABELS[name])
            ax.set_xlabel("pre-activation z (tanh input)")
            ax.set_yscale("log")
            ax.set_ylim(1e-4, 1)
        axes[0].set_ylabel("density")
        fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=5)  # covers no data
        fig.suptitle(f"Pre-activation histograms per layer, {depth}-layer tanh MLP, weights ~ N(0, 1)")
        paths.append(_plot.save(fig, outdir, "saturation_histograms"))

    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            kw = dict(_plot.series(name), label=_plot.LABELS[name])
            ax1.plot(np.arange(1, depth + 1), 100 * result[f"{name}/saturated"], **kw)
            g = result[f"{name}/grad_norm"]
            ax2.semilogy(np.arange(1, len(g) + 1), g, **kw)
        ax1.set(title="Saturated units", xlabel="hidden layer", ylabel="% units with |tanh(z)| > 0.99",
                ylim=(-3, 100))
        ax2.set(title="Gradient norm per layer: no norm explodes toward the input",
                xlabel="Linear layer (1 = input side)",
                ylabel="||dL/dW|| (log scale)")
        ax1.legend()
        ax2.legend()
        fig.suptitle("Large weights saturate tanh units; a norm before the activation prevents it")
        paths.append(_plot.save(fig, outdir, "saturation_gradients"))
    return paths
