"""Logit control: what z-loss, soft-capping and QK-norm (per head or over the whole projection)
do to the largest attention logit, the largest output logit and the loss, over a sweep of
learning rates; the sequel to the qk_norm experiment, on its model and task.

The variants, each on the same Pre-LN TinyTransformer (d_model 32, 2 blocks, 2 heads, float32),
the copy task (8 symbols from 10), Adam without warmup at a constant learning rate, the same
steps, batches and seeds::

    "none"           nothing
    "z_loss"         the loss + 1e-4 * mean(log Z)**2 (PaLM's coefficient)
    "softcap"        attention scores c * tanh(S / c) with c = 50, final logits with c = 30
                     (Gemma 2's caps)
    "qk_head"        an RMSNorm on each head's q and k (Gemma 3, Qwen 3)
    "qk_projection"  an RMSNorm on the whole q and k projection, all heads at once (OLMo 2)

Measured after training, on one fixed batch: the largest |attention logit| the softmax sees
(over blocks, heads, batch and the pairs the causal mask allows; recomputed from the weights by
``qk_norm.attention_logits``), the same before the soft-cap, the largest |output logit| (after
the final cap, and before it), the mean log Z of the output logits, and the cross-entropy (without
the z-loss term); and the final training loss (mean of the last 20 steps, with the z-loss term,
which is at most a few thousandths here).

What the full run shows (learning rates 3e-3, 3e-2, 1e-1, 3e-1; 120 steps; seeds 0 and 1): every
variant trains at 3e-3 and 3e-2 (fixed-batch loss below 0.01) and fails at 3e-1 (1.8 to 2.4). At
1e-1 without QK-norm the largest attention logit reaches 1.2e3 to 9.0e3 and the loss stays at
chance (2.24 to 2.33), with or without the z-loss; with the soft-caps the softmax sees at most 50,
the scores under the cap reach 1.5e3 to 3.8e3, and one seed learns (0.16) while the other does
not (2.29); QK-RMSNorm per head trains in both seeds (0.04, 0.0004) with logits of 32 to 33, over
the whole projection in one (0.002; the other ends at 1.10, with logits of 36 to 51). The z-loss
lowers the mean log Z (8.3 to 8.8 against 10.0 to 10.1 at 3e-2) and the largest output logit a
little. The final cap of 30 never binds: the soft-capped models' largest output logit is 15;
the largest output logits, 44 to 58, are those of the QK-norm models that trained at 1e-1.

What not to conclude: that the soft-cap or the z-loss do not help at scale (Gemma 2 and PaLM
use them against failures this 120-step toy model does not have: the z-loss against the output
logits' drift late in long training, Wortsman et al. 2023), that QK-norm over the projection is
worse than per head (one seed of two, at one learning rate), or anything from the median of two
seeds beyond what each seed shows.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from ..nn import CrossEntropyLoss, TinyTransformer
from ..nn.losses import logsumexp
from ..optim import Adam
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import lr_sweep
from .qk_norm import attention_inputs, attention_logits, copy_task, final_loss

NAME = "logit_control"
TITLE = N_("Logit control: z-loss, soft-capping and QK-norm over a sweep of learning rates")  # shown as _(TITLE)
TAKEAWAY = ("In a 2-block Pre-LN Transformer (Adam, no warmup, 120 steps, 2 seeds) every variant trains at lr 3e-3 "
            "and 3e-2 and none at 3e-1. At 1e-1 only QK-norm keeps the largest attention logit at 30-50 and trains: "
            "per head in both seeds, over the whole projection in one (the other ends at loss 1.1). Without it the "
            "logits reach 10^3-10^4 and the loss stays at chance; the z-loss (1e-4) changes neither; soft-capping "
            "holds what the softmax sees at 50 while the scores under the cap grow as far, and learns in one seed "
            "of two. The final cap (30) never binds here.")

VARIANTS = ("none", "z_loss", "softcap", "qk_head", "qk_projection")
OPTIONS = {"none": {}, "z_loss": {}, "softcap": {"attn_softcap": 50.0, "logit_softcap": 30.0},
           "qk_head": {"qk_norm": "rmsnorm", "qk_norm_scope": "head"},
           "qk_projection": {"qk_norm": "rmsnorm", "qk_norm_scope": "projection"}}
Z_LOSS = 1e-4
LABELS = {"none": "nothing", "z_loss": f"z-loss {Z_LOSS:g}", "softcap": "soft-cap 50 / 30",
          "qk_head": "QK-RMSNorm per head", "qk_projection": "QK-RMSNorm, whole projection"}
OI = _plot.OKABE_ITO
COLORS = {"none": OI["grey"], "z_loss": OI["vermillion"], "softcap": OI["orange"], "qk_head": OI["green"],
          "qk_projection": OI["blue"]}
MARKERS = {"none": "X", "z_loss": "o", "softcap": "s", "qk_head": "^", "qk_projection": "D"}
LINESTYLES = {"none": ":", "z_loss": "-", "softcap": "--", "qk_head": "-.", "qk_projection": (0, (1, 1))}

D_MODEL, N_LAYERS, N_HEADS = 32, 2, 2
BATCH_SIZE = 32
TRAINED = 0.1  # a run "trains" when its probe loss is below TRAINED * the chance loss (as in qk_norm)


def model_for(variant, seed):
    task = copy_task()
    return TinyTransformer(task.vocab_size, D_MODEL, N_LAYERS, N_HEADS, task.seq_len, position="pre", rng=seed,
                           dtype=np.float32, norm_tier="fast", **OPTIONS[variant])


def largest_attention_logit(model, tokens, capped=True):
    """The largest |q.k| / sqrt(D) over blocks, heads, batch and allowed pairs, as the softmax sees
    it (``capped=False``: before the soft-cap)."""
    largest = 0.0
    for attn, h in attention_inputs(model, tokens):
        S, _, allowed = attention_logits(attn, h, capped=capped)
        largest = max(largest, float(np.abs(S[..., allowed]).max()))
    return largest


def output_logits(model, tokens):
    """(the model's logits (B, T, V), the same before its final soft-cap), float64: its forward
    run stage by stage (TinyTransformer's docstring)."""
    x = model.pos_emb(model.tok_emb(tokens))  # (B, T, C)
    for stage in (model.blocks, getattr(model, "norm_f", None), model.head):
        x = x if stage is None else stage(x)  # (B, T, C), then (B, T, V)
    cap = getattr(model, "logit_cap", None)
    return (x if cap is None else cap(x)).astype(np.float64), x.astype(np.float64)


def measure(model, tokens, targets):
    """On one batch: largest attention logit (capped, raw), largest output logit (capped, raw),
    mean log Z, and the plain cross-entropy."""
    model.eval()
    logits, raw = output_logits(model, tokens)
    flat = logits.reshape(-1, logits.shape[-1])
    loss = float(CrossEntropyLoss()(flat, targets.reshape(-1)))
    model.train()
    return (largest_attention_logit(model, tokens), largest_attention_logit(model, tokens, capped=False),
            float(np.abs(logits).max()), float(np.abs(raw).max()), float(logsumexp(flat).mean()), loss)


MEASURES = ("attn_logit", "attn_raw", "out_logit", "out_raw", "log_z", "probe_loss")


@single_thread()
def train(variant, lr, steps, seed):
    """Train one model; returns its loss history (steps,) and ``measure`` after training."""
    task = copy_task()
    model = model_for(variant, seed)
    loss_fn = CrossEntropyLoss(z_loss=Z_LOSS if variant == "z_loss" else 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        history = fit(model, task, Adam(model.parameters(), lr=lr), steps, progress=False, loss_fn=loss_fn,
                      batch_size=BATCH_SIZE, seed=seed + 1000)
        tokens, targets = task.batch(BATCH_SIZE, seed + 2000)
        return history["loss"], measure(model, tokens, targets)


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train every variant at every learning rate from ``n_seeds`` initialisations. ``loss`` is
    (variants, lrs, seeds, steps); each of ``MEASURES`` (variants, lrs, seeds)."""
    quick = flag(quick, "quick", "experiments.logit_control.run")
    if quick:
        steps, n_seeds, lrs = 100, 1, np.array([1e-2, 1e-1])
    else:
        steps, n_seeds, lrs = 120, 2, np.array([3e-3, 3e-2, 1e-1, 3e-1])
    seeds = [seed + k for k in range(n_seeds)]
    runs = lr_sweep(VARIANTS, lrs, seeds, train, steps, progress)
    shape = (len(VARIANTS), len(lrs), n_seeds)
    result = {"variants": np.array(VARIANTS), "lrs": lrs, "seeds": np.array(seeds), "steps": steps,
              "loss": np.array([runs[idx][0] for idx in np.ndindex(shape)]).reshape(shape + (steps,))}
    for m, key in enumerate(MEASURES):
        result[key] = np.array([runs[idx][1][m] for idx in np.ndindex(shape)]).reshape(shape)
    result["final_loss"] = np.vectorize(final_loss, signature="(n)->()")(result["loss"])
    result["chance_loss"] = math.log(copy_task().n_symbols)
    result["trains"] = result["probe_loss"] < TRAINED * result["chance_loss"]
    return result


PANELS = (("probe_loss", "cross-entropy on a fixed batch (nats)", "loss after training", "log"),
          ("attn_logit", "largest |q.k| / sqrt(D) the softmax sees", "largest attention logit", "log"),
          ("out_logit", "largest |output logit|", "largest output logit", "log"))


def plot(result, outdir):
    lrs, n_seeds = result["lrs"], len(result["seeds"])
    spread = f"median and range of {n_seeds} seeds" if n_seeds > 1 else "one seed"
    with _plot.figure(ncols=len(PANELS), size=(26, 7.5)) as (fig, axes):
        for ax, (key, ylabel, title, scale) in zip(axes, PANELS):
            for i, variant in enumerate(result["variants"]):
                values = np.minimum(result[key][i], 1e6)  # (lrs, seeds); a diverged run drawn at 1e6
                if n_seeds > 1:
                    ax.fill_between(lrs, values.min(axis=-1), values.max(axis=-1), color=COLORS[variant], alpha=0.15)
                ax.plot(lrs, np.median(values, axis=-1), label=LABELS[variant],
                        **_plot.series(variant, COLORS, MARKERS, LINESTYLES))
            ax.set(xscale="log", yscale=scale, xlabel="learning rate (Adam, constant, no warmup)", ylabel=ylabel,
                   title=title)
        axes[0].axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5,
                        label=f"chance, ln(10) = {result['chance_loss']:.2f}")
        axes[0].legend(loc="best")
        fig.suptitle(f"{N_LAYERS}-block Pre-LN Transformer on the copy task, {result['steps']} steps ({spread})")
        return [_plot.save(fig, outdir, NAME)]
