"""Saturation: large weights drive tanh units into their flat tails; a norm before the
activation keeps the pre-activations near N(0, 1) and the gradients the same size in every layer.

A deep tanh MLP (Linear -> [norm] -> tanh, weights ~ N(0, 1), i.e. sqrt(fan_in) times the usual
1/sqrt(fan_in) scale) sees one batch; we record each layer's pre-activations z (the tanh
inputs), the fraction of saturated units (|tanh(z)| > 0.99, where tanh'(z) < 0.02) and the
norm of each Linear weight's gradient under a cross-entropy loss.
"""

import numpy as np

from .. import BatchNorm1d, CrossEntropyLoss, LayerNorm, Linear, Tanh
from ..perf.threads import single_thread
from . import _plot
from ._nn import forward_recording, mlp, teacher_task

NAME = "saturation"
TITLE = "Saturation of a deep tanh MLP with large weights"
TAKEAWAY = ("With large weights most tanh units sit in their flat tails and the per-layer gradient norms "
            "span orders of magnitude; BatchNorm or LayerNorm before the activation keeps almost every unit "
            "in the linear range and the gradients the same size in every layer.")

NORMS = {"none": None, "batchnorm": BatchNorm1d, "layernorm": LayerNorm}
SATURATED = 0.99  # |tanh(z)| above this counts as saturated (|z| > 2.65, tanh'(z) < 0.02)
BINS = np.linspace(-30, 30, 121)


def measure(norm, depth=10, width=128, batch=256, weight_std=1.0, norm_after=False, rng=None):
    """One forward and backward pass of the deep tanh MLP; returns per-layer arrays.

    ``norm`` is None or a layer class (``width -> Module``); with ``norm_after=True`` it is put
    after the activation instead of before it (the wrong place, for comparison).
    Returns dict: ``pre`` (depth, batch, width) tanh inputs, ``saturated`` (depth,) fraction of
    saturated units, ``grad_norm`` (depth + 1,) Frobenius norm of each Linear weight's gradient.
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
    return {"pre": pre, "saturated": saturated, "grad_norm": grad_norm}


@single_thread()
def run(quick=False, seed=0, progress=None):
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
        # histogram (density) of each layer's pre-activations, all seeds pooled
        pre = np.concatenate([r["pre"] for r in runs], axis=1)
        counts = np.stack([np.histogram(p, BINS)[0] for p in pre])  # (depth, bins)
        result[f"{name}/hist"] = counts / (pre[0].size * np.diff(BINS))  # density; tails beyond +-30 not drawn
        result[f"{name}/pre_std"] = pre.std(axis=(1, 2))
    return result


def plot(result, outdir):
    depth = result["depth"]
    layers = sorted({0, 1, depth // 2 - 1, depth - 1})
    centers = 0.5 * (result["bins"][1:] + result["bins"][:-1])
    cut = np.arctanh(SATURATED)
    paths = []
    with _plot.figure(ncols=3, size=(18, 6.5), sharey=True) as (fig, axes):
        cmap = _plot.matplotlib.colormaps["viridis"]
        for ax, name in zip(axes, NORMS):
            for k, layer in enumerate(layers):
                ax.plot(centers, result[f"{name}/hist"][layer], color=cmap(k / max(1, len(layers) - 1)),
                        label=f"layer {layer + 1}")
            ax.axvspan(result["bins"][0], -cut, color="tab:red", alpha=0.12)
            ax.axvspan(cut, result["bins"][-1], color="tab:red", alpha=0.12, label="saturated (|tanh| > 0.99)")
            ax.set_title(_plot.LABELS[name])
            ax.set_xlabel("pre-activation z (tanh input)")
            ax.set_yscale("log")
            ax.set_ylim(1e-4, 1)
        axes[0].set_ylabel("density")
        axes[0].legend(loc="upper left")
        fig.suptitle(f"Pre-activation histograms per layer, {depth}-layer tanh MLP, weights ~ N(0, 1)")
        paths.append(_plot.save(fig, outdir, "saturation_histograms"))

    with _plot.figure(ncols=2, size=(17, 6.5)) as (fig, (ax1, ax2)):
        for name in NORMS:
            kw = dict(color=_plot.COLORS[name], label=_plot.LABELS[name], marker="o")
            ax1.plot(np.arange(1, depth + 1), 100 * result[f"{name}/saturated"], **kw)
            g = result[f"{name}/grad_norm"]
            ax2.semilogy(np.arange(1, len(g) + 1), g, **kw)
        ax1.set(title="Saturated units", xlabel="hidden layer", ylabel="% units with |tanh(z)| > 0.99",
                ylim=(-3, 100))
        ax2.set(title="Gradient norm per layer", xlabel="Linear layer (1 = input side)",
                ylabel="||dL/dW|| (log scale)")
        ax1.legend()
        ax2.legend()
        fig.suptitle("Large weights saturate tanh units; a norm before the activation prevents it")
        paths.append(_plot.save(fig, outdir, "saturation_gradients"))
    return paths
