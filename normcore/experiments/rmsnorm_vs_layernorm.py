"""RMSNorm against LayerNorm in the same Pre-LN Transformer: the loss it reaches, and the time of a step.

Zhang & Sennrich (2019) propose RMSNorm, LayerNorm without the mean (no re-centring, no beta),
and report that it matches LayerNorm's quality while cutting the running time by 7% to 64% on a
GPU; LLaMA-style models use it. Two separate questions, measured separately here:

Loss. The same Pre-LN TinyTransformer (4 blocks, d_model 32, 4 heads, float32, the norms of the
fast tier) learns to sort 8 symbols from 10, with AdamW at lr = 3e-3 (no weight decay), a
linear warmup over the first tenth of the steps then a cosine decay, gradient clipping at 1 and
batches of 32, once with every norm a LayerNorm and once with every norm an RMSNorm, from 5
initialisations (2 in the quick run); initialisation k also draws its own training batches,
the same for both norms. The budget (300 steps; 150 in the quick run) is short enough that no
run has reached a floor (the loss is still slowly falling when the cosine schedule ends), so a
norm that learns faster would show it. The final loss is the
mean training loss of the last 20 steps (every batch is fresh, never seen before).

Time. One training step (forward, cross-entropy, backward, AdamW update on a fixed batch of the
same shape) of the same model with LayerNorm and with RMSNorm, in each tier (``norm_tier``
"reference" and "fast"), and, on its own, one forward and backward of one norm layer on the
(32, 16, 32) activations a norm of that model sees; all eight timed in interleaved rounds on
one thread (``normcore.perf.timing``), and compared by ``paired_ratio``: the median over rounds
of RMSNorm's time over LayerNorm's in the same round. The model has 2 * 4 + 1 = 9 norms, so 9
times a norm's time is the share of the step the norms take.

What the full run shows (on a machine shared with other jobs). Loss: both norms reach about
0.045 from ln(10) = 2.30 (token accuracy 99%); the final losses of the 5 initialisations
overlap (LayerNorm median 0.047, range 0.041-0.050; RMSNorm median 0.044, range 0.035-0.053;
each median lies inside the other norm's range), and initialisation by initialisation the
difference changes sign (RMSNorm minus LayerNorm from -0.006 to +0.006). Time: one norm layer
alone takes 29% less time as RMSNorm in the reference tier and 32% less in the fast tier (ratio
0.71 and 0.68), but the nine norms are only 5-6% of a LayerNorm step here, which predicts a
step about 2% faster; the step measured 6% faster in the reference tier and 4% in the fast tier
(ratio 0.94 and 0.96, 95% intervals of the median 0.91-0.96 and 0.93-0.98). That is somewhat
more than the norms' own time predicts, and this run does not explain the rest (a one-off check
timed AdamW's whole update at about 1% of a step, so the nine betas RMSNorm lacks do not).
Either way the whole step changes by a few percent where the norm alone changes by about 30%:
attention, the feed-forward matrices, the embedding, the loss and AdamW take the other ~94%.

What not to conclude: that RMSNorm is never better or worse than LayerNorm (one toy task, one
learning rate, 5 initialisations detect only a large difference), nor anything about the
speed-ups the paper reports: it timed whole models in GPU frameworks, while here a d_model-32
model runs in NumPy on one CPU thread, where the norms are small next to the rest of a step and
the machine's load moves single steps by tens of percent (hence the paired ratios over 200 rounds).
Nor that a norm layer is 30% faster as RMSNorm everywhere: NumPy makes a pass over memory per
operation, while a fused kernel reads x and writes y once for either norm, so both are bound by
memory bandwidth and the arithmetic RMSNorm skips costs little.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import tasks
from ..nn import CrossEntropyLoss, TinyTransformer
from ..nn.transformer import norm_class
from ..optim import AdamW, warmup_cosine
from ..perf.threads import blas_threads, single_thread
from ..perf.timing import LayerRunner, keep_freed_memory, paired_ratio, time_interleaved
from ..train import fit, loss_and_backward
from . import _plot
from ._positions import D_MODEL, N_HEADS
from .warmup import smooth

NAME = "rmsnorm_vs_layernorm"
TITLE = N_("RMSNorm vs LayerNorm in the same Pre-LN Transformer: final loss and time per step")  # shown as _(TITLE)
TAKEAWAY = ("RMSNorm keeps LayerNorm's performance here: in a 4-block Pre-LN Transformer sorting 8 symbols the "
            "final losses of 5 initialisations overlap (medians 0.047 and 0.044, each inside the other's range, "
            "far below ln(10) = 2.30). The norm layer alone takes about 30% less time as RMSNorm, but the nine "
            "norms are only 5-6% of a training step, which predicts a step about 2% faster; it measured 6% "
            "faster in the reference tier (95% interval 4-9%) and 4% in the fast tier (2-7%), more than that "
            "prediction for a reason this experiment does not identify. One toy task on a busy CPU, not the "
            "paper's GPU models.")

NORMS = ("layernorm", "rmsnorm")
TIERS = ("reference", "fast")
N_LAYERS = 4
N_NORMS = 2 * N_LAYERS + 1  # two per Pre-LN block, and the final one
LR = 3e-3
BATCH_SIZE = 32
CLIP = 1.0
FINAL_WINDOW = 20  # the final loss: the mean training loss of the last steps


def sort_task():
    return tasks.SortTask(n_tokens=8, n_symbols=10)


def make_model(norm, tier, seed):
    """The Pre-LN TinyTransformer with every norm a ``norm`` of ``tier``, initialised from ``seed``."""
    task = sort_task()
    return TinyTransformer(task.vocab_size, D_MODEL, N_LAYERS, N_HEADS, task.seq_len, norm=norm,
                           position="pre", norm_tier=tier, rng=seed, dtype=np.float32)


def optimizer(model):
    return AdamW(model.parameters(), lr=LR, weight_decay=0.0)


@single_thread()
def train(norm, steps, seed):
    """Train one model from ``seed`` (which also seeds its batches); returns fit's history."""
    model = make_model(norm, "fast", seed)
    schedule = warmup_cosine(LR, max(1, steps // 10), steps)
    return fit(model, sort_task(), optimizer(model), steps, schedule=schedule, clip=CLIP, progress=False,
               batch_size=BATCH_SIZE, seed=seed + 1000)


def final_loss(loss):
    """The mean of the last FINAL_WINDOW losses of each run: (..., steps) -> (...)."""
    return loss[..., -FINAL_WINDOW:].mean(axis=-1)


class TrainingStep:
    """A timing runner: ``step()`` is one training step of ``model`` on a fixed batch (forward,
    cross-entropy, backward, AdamW update)."""

    def __init__(self, model, tokens, targets):
        self.model, self.tokens, self.targets = model, tokens, targets
        self.loss, self.opt = CrossEntropyLoss(), optimizer(model)

    def context(self):
        return blas_threads(1)

    def step(self):
        self.opt.zero_grad()
        loss_and_backward(self.model, self.loss, self.model(self.tokens), self.targets)
        self.opt.step()


class NormStep(LayerRunner):
    """A timing runner: ``step()`` is one forward and one backward of a norm layer alone, so that
    it is timed in the same rounds as the training steps."""

    def step(self):
        self.forward()
        self.backward()


def time_steps(repeats, seed):
    """Seconds of each round, (tiers, norms, repeats), of a training step ("step") and of one
    norm's forward + backward ("norm"): all eight runners interleaved."""
    tokens, targets = sort_task().batch(BATCH_SIZE, seed + 2000)
    rng = np.random.default_rng([seed, 17])
    shape = (*tokens.shape, D_MODEL)  # what every norm of the model sees
    x, dy = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape).astype(np.float32)
    runners = {}
    for tier in TIERS:
        for norm in NORMS:
            runners["step", tier, norm] = TrainingStep(make_model(norm, tier, seed), tokens, targets)
            runners["norm", tier, norm] = NormStep(norm_class(norm, tier)(D_MODEL, dtype=np.float32), x, dy)
    keep_freed_memory()  # time the arithmetic, not the page faults of fresh arrays
    times = time_interleaved(runners, ("step",), repeats, warmup=2)
    return {what: np.array([[times[(what, tier, norm), "step"] for norm in NORMS] for tier in TIERS])
            for what in ("step", "norm")}


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train both norms from ``n_seeds`` initialisations (seed, seed + 1, ...): ``loss`` is
    (norms, seeds, steps); then time the steps and the norms of both tiers: ``step_seconds`` and
    ``norm_seconds`` are (tiers, norms, rounds)."""
    quick = flag(quick, "quick", "experiments.rmsnorm_vs_layernorm.run")
    steps, n_seeds, repeats = (150, 2, 8) if quick else (300, 5, 200)
    seeds = [seed + k for k in range(n_seeds)]
    loss = np.zeros((len(NORMS), n_seeds, steps))
    accuracy = np.zeros_like(loss)
    total = loss[..., 0].size + 1
    for i, norm in enumerate(NORMS):
        for k, s in enumerate(seeds):
            history = train(norm, steps, s)
            loss[i, k], accuracy[i, k] = history["loss"], history["accuracy"]
            if progress is not None:
                progress(i * n_seeds + k + 1, total, f"{norm} seed {s}")
    times = time_steps(repeats, seed)
    if progress is not None:
        progress(total, total, "timing")
    final = final_loss(loss)  # (norms, seeds)
    return {"norms": np.array(NORMS), "tiers": np.array(TIERS), "seeds": np.array(seeds), "loss": loss,
            "accuracy": accuracy, "final_loss": final, "chance_loss": math.log(sort_task().n_symbols),
            "final_loss_difference": final[NORMS.index("rmsnorm")] - final[NORMS.index("layernorm")],
            "step_seconds": times["step"], "norm_seconds": times["norm"], "n_norms": N_NORMS,
            **ratios(times["step"], times["norm"])}


def ratios(step_seconds, norm_seconds):
    """RMSNorm's time over LayerNorm's per tier, paired by round: of the step and of the norm
    alone (the median, every round's, and an interval of the median); the share of each step
    its N_NORMS norms take (N_NORMS times a norm's time alone over the step's); and the step
    ratio that share predicts from the norm's ratio, if nothing else changed."""
    ln, rms = NORMS.index("layernorm"), NORMS.index("rmsnorm")
    result = {}
    for what, seconds in (("step", step_seconds), ("norm", norm_seconds)):
        result[f"{what}_ratio"] = np.array([paired_ratio(t[rms], t[ln]) for t in seconds])  # (tiers,)
        result[f"{what}_ratio_rounds"] = seconds[:, rms] / seconds[:, ln]  # (tiers, rounds)
        result[f"{what}_ratio_interval"] = np.array([median_interval(r) for r in result[f"{what}_ratio_rounds"]])
    result["norm_share"] = np.median(N_NORMS * norm_seconds / step_seconds, axis=-1)  # (tiers, norms)
    # if only the norms changed: the step saves LayerNorm's share times the norm's saving
    result["expected_step_ratio"] = 1 - result["norm_share"][:, ln] * (1 - result["norm_ratio"])
    return result


def offsets(n):
    """Where the n initialisations' points sit around their norm's x position."""
    return np.linspace(-0.15, 0.15, n)


def median_interval(values):
    """An approximate 95% confidence interval of the median of ``values``, from their order
    statistics (no assumption on their distribution): the k-th smallest and the k-th largest,
    k = (n - 1.96 sqrt(n)) / 2 rounded down (at least 1)."""
    ordered = np.sort(values)
    n = len(ordered)
    k = max(1, int((n - 1.96 * np.sqrt(n)) // 2))
    return ordered[k - 1], ordered[n - k]


def plot(result, outdir):
    return [plot_loss(result, outdir), plot_time(result, outdir)]


def plot_loss(result, outdir):
    steps = np.arange(1, result["loss"].shape[-1] + 1)
    n_seeds = len(result["seeds"])
    with _plot.figure(ncols=2, size=(18, 7), gridspec_kw={"width_ratios": [2, 1]}) as (fig, (ax1, ax2)):
        for i, norm in enumerate(result["norms"]):
            curves = np.array([smooth(run) for run in result["loss"][i]])  # (seeds, steps)
            color = _plot.COLORS[norm]
            ax1.fill_between(steps, curves.min(axis=0), curves.max(axis=0), color=color, alpha=0.2)
            ax1.plot(steps, np.median(curves, axis=0), **_plot.series(norm), markevery=(10 * (i + 1), len(steps) // 6),
                     label=_plot.LABELS[norm])
            final = result["final_loss"][i]
            x = i + offsets(n_seeds)
            ax2.plot(x, final, linestyle="none", marker=_plot.MARKERS[norm], color=color, markersize=12,
                     label=f"{_plot.LABELS[norm]}, one initialisation each")
            ax2.hlines(np.median(final), i - 0.3, i + 0.3, color=color, linestyle=_plot.LINESTYLES[norm],
                       linewidth=3, label=f"median {np.median(final):.3f}")
        ax2.plot(np.arange(len(result["norms"]))[:, None] + offsets(n_seeds), result["final_loss"], color="black",
                 alpha=0.3, linewidth=1.5, zorder=0)  # one line per initialisation: the same weights and batches
        ax1.axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5,
                    label=f"uniform guess, ln(10) = {result['chance_loss']:.2f}")
        ax1.set(xlabel="training step", ylabel="training loss (cross-entropy, 10-step mean)",
                title="Loss curves", yscale="log")
        ax1.legend(loc="upper right")
        ax2.set_xticks(range(len(result["norms"])), [_plot.LABELS[n] for n in result["norms"]])
        ax2.set(xlim=(-0.6, len(result["norms"]) - 0.4), ylabel=f"final loss (mean of the last {FINAL_WINDOW} steps)",
                title="Final loss, per initialisation\n(grey lines join the same initialisation)")
        ax2.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), fontsize=13)
        fig.suptitle(f"LayerNorm vs RMSNorm in a Pre-LN Transformer ({N_LAYERS} blocks, d_model {D_MODEL}) "
                     f"sorting 8 symbols, AdamW lr = {LR:g}\n(median and range of {n_seeds} initialisations)")
        return _plot.save(fig, outdir, NAME)


def plot_time(result, outdir):
    tiers = list(result["tiers"])
    x = np.arange(len(tiers))
    width = 0.38
    bars = (("step", "whole training step", _plot.OKABE_ITO["blue"], "//"),
            ("norm", "one norm layer alone (forward + backward)", _plot.OKABE_ITO["orange"], ""))
    rounds = result["step_ratio_rounds"].shape[-1]
    with _plot.figure(size=(13, 7.5)) as (fig, ax):
        for j, (what, label, color, hatch) in enumerate(bars):
            median = result[f"{what}_ratio"]
            low, high = np.percentile(result[f"{what}_ratio_rounds"], [25, 75], axis=-1)
            offset = x + (j - 0.5) * width
            ax.bar(offset, median, width, color=color, hatch=hatch, edgecolor="black", label=label,
                   yerr=[median - low, high - median], capsize=8, error_kw={"linewidth": 2.5})
            for xi, m, (lo, hi) in zip(offset, median, result[f"{what}_ratio_interval"]):
                ax.text(xi, 0.05, f"{m:.2f}\n95% CI\n{lo:.2f}-{hi:.2f}", ha="center", va="bottom", fontsize=14,
                        bbox={"facecolor": "white", "edgecolor": "black", "boxstyle": "round"})
        ax.plot(x - width / 2, result["expected_step_ratio"], linestyle="none", marker="D", markersize=13,
                color=_plot.OKABE_ITO["vermillion"], markeredgecolor="black",
                label="step, expected from the norms' share alone")
        ax.axhline(1.0, color="black", linestyle=":", linewidth=2.5, label="equal time")
        share = result["norm_share"][:, list(result["norms"]).index("layernorm")]
        ax.set_xticks(x, [f"{tier} tier\n(the {result['n_norms']} LayerNorms: {100 * s:.0f}% of the step)"
                          for tier, s in zip(tiers, share)])
        ax.set(ylabel="RMSNorm time / LayerNorm time", ylim=(0, 1.55),
               title=f"median over {rounds} interleaved rounds (CI: of the median), bars: interquartile range")
        ax.legend(loc="upper center", ncols=2, framealpha=0.95, fontsize=13)
        fig.suptitle(f"Time of RMSNorm relative to LayerNorm: the norm alone vs a training step of the\n"
                     f"{N_LAYERS}-block Transformer (batch {BATCH_SIZE} x 16 tokens, d_model {D_MODEL}, float32), "
                     "1 thread")
        return _plot.save(fig, outdir, f"{NAME}_time")
