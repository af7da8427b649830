"""QK-norm: a norm on each head's queries and keys bounds the attention logits by its learned
gains (and biases), which slows their growth (Henry et al. 2020; Dehghani et al. 2023, ViT-22B; Wortsman et
al. 2023).

Wortsman et al. find that a Pre-LN Transformer trained at a high learning rate can fail through
"attention logit growth": the logits q.k / sqrt(D) grow without bound, each softmax collapses
to one key (attention entropy near 0) and the loss stops falling or diverges. A LayerNorm on
each head's q and k (QK-layernorm, as in ViT-22B) keeps the logits smaller and makes the final
loss less sensitive to the learning rate, so a wider range of learning rates trains.

Configuration (found by a small sweep of learning rates on two model sizes; the failure showed
in both, d_model 64 with 4 blocks and this cheaper one): a Pre-LN TinyTransformer (LayerNorm,
d_model 32, 2 blocks, 2 heads so D = 16 channels per head, float32) on the copy task (8 symbols
from 10, repeated after a separator), Adam without weight decay at a constant learning rate, no
warmup, 200 steps of batches of 32, with no QK-norm, QK-LayerNorm or QK-RMSNorm. No warmup and
no decay is harsher than Wortsman et al.'s warmup and cosine decay; it shows the failure within
200 steps (a warmup was not tried here). Learning rates from 1e-4 to 1, three per decade, each
from two initialisations.

Measured: the final loss (training loss of the last 20 steps, each a fresh batch) against the
learning rate; and every 10 steps, on one fixed batch, each block's largest |attention logit|
(over heads, batch, and the query-key pairs the causal mask allows), its mean attention entropy,
and, with QK-norm, the bound on the logits that the norm's learned weights allow. The logits are
recomputed from each attention's input and weights (q and k through its Linear layers and
QK-norm), never read from or written to its internals. With normalised u = q_norm's and w =
k_norm's standardised inputs (|u|, |w| <= sqrt(D)), q = g_q * u + b_q, k = g_k * w + b_k, so::

    |q.k| / sqrt(D) <= sqrt(D) max_i |g_q,i g_k,i| + |g_q * b_k| + |b_q * g_k| + |b_q.b_k| / sqrt(D)

(RMSNorm has no b; normcore's QK-LayerNorm has b_q but no b_k.)

What the full run shows (two seeds, which agree on every learning rate): without QK-norm the
model learns the task from lr 1e-3 up to 4.6e-2 but stays at the chance loss ln(10) from 1e-1
on; at lr 1e-1 its largest logit passes 300 within 10 steps and ends above 10^4, and the mean
attention entropy falls to about 0.07 nats. With either QK-norm the model learns from 1e-3 up to
2.2e-1, two grid points (a factor of about 4.6) further, and fails from 4.6e-1 on. With either
QK-norm the largest logit after training still grows with the learning rate, from about 3 at
lr 1e-4 to about 200 (QK-RMSNorm) and 500 (QK-LayerNorm) at lr 1 (the figure's medians over the
two seeds): the norm slows the growth and bounds it by the learned gains, it does not stop it.
At every measurement of every run the logits stay within the bound computed from the norm's
weights (at lr 1e-1 the largest logit ends at about 0.7 of it with QK-LayerNorm and 0.8 with
QK-RMSNorm, read from the logits figure),
and at lr 1e-1 they end between 28 and 46. The norm does not cap the logits at a constant: they
grow with the learned gains g_q and g_k (the bound grows from 4 at initialisation to up to 1159
at lr 1). One reason the growth is so much slower: Adam moves each gain entry by about lr per
step (its step is lr * m_hat / sqrt(v_hat), of the order of lr whatever the gradient's size),
whereas without the norm each entry of q sums C = 32 weights that all move by about lr per step,
times its input. Where QK-norm fails (lr 4.6e-1 and 1) the attention has not
collapsed (mean entropy 0.7 to 1.1 nats): something else breaks first, which this experiment
does not diagnose. At the low end both fail alike (lr up to 4.6e-4 is too small for 200 steps).

What not to conclude: that QK-norm makes any learning rate safe (it fails from 4.6e-1 on), or
that the factor of the range transfers to real models; this is a two-block model trained for
200 steps without warmup, on a coarse grid of learning rates. Wortsman et al. find the
instability grows with model size, which a toy model of one size cannot show.
"""

import math

import numpy as np

from .._array import flag
from ..i18n import N_
from .. import tasks
from ..nn import TinyTransformer, softmax
from ..nn.softcap import softcap
from ..optim import Adam
from ..perf.threads import single_thread
from ..train import fit
from . import _plot
from ._positions import lr_sweep, residual_stream
from .warmup import smooth

NAME = "qk_norm"
TITLE = N_("QK-norm slows attention-logit growth and widens the range of learning rates that train")
TAKEAWAY = ("Without QK-norm a 2-block Pre-LN Transformer trained with Adam and no warmup fails from lr 1e-1 "
            "on: its largest attention logit grows past 10^4 and the attention collapses onto single keys. With a "
            "LayerNorm or RMSNorm on each head's q and k the largest logit still grows with the learning rate, "
            "from about 3 at lr 1e-4 to about 200 (RMSNorm) and 500 (LayerNorm) at lr 1, but under the bound "
            "the norm's learned gains (and LayerNorm's bias) set, and the model trains up to lr 2.2e-1 instead "
            "of 4.6e-2. "
            "One toy model; QK-norm fails too from lr 4.6e-1 on.")

VARIANTS = ("none", "layernorm", "rmsnorm")  # the attention's qk_norm ("none": without)
COLORS = {v: _plot.COLORS[v] for v in VARIANTS}
MARKERS = {v: _plot.MARKERS[v] for v in VARIANTS}
LINESTYLES = {v: _plot.LINESTYLES[v] for v in VARIANTS}
LABELS = {"none": "no QK-norm", "layernorm": "QK-LayerNorm", "rmsnorm": "QK-RMSNorm"}
BOUND_STYLES = {"layernorm": {"color": _plot.OKABE_ITO["sky_blue"], "marker": "v", "linestyle": (0, (1, 1))},
                "rmsnorm": {"color": _plot.OKABE_ITO["purple"], "marker": "D", "linestyle": (0, (6, 2, 1, 2))}}

D_MODEL, N_LAYERS, N_HEADS = 32, 2, 2
BATCH_SIZE = 32
EVERY = 10  # steps between two measurements of the logits
FINAL_STEPS = 20  # the final loss is the mean training loss of the last FINAL_STEPS steps
HIGH_LR = 1e-1  # the learning rate of the logits figure
TRAINED = 0.1  # a run "trains" when its final loss is below TRAINED * the chance loss


def copy_task():
    return tasks.CopyTask(n_tokens=8, n_symbols=10)


def model_for(variant, seed):
    task = copy_task()
    return TinyTransformer(task.vocab_size, D_MODEL, N_LAYERS, N_HEADS, task.seq_len, position="pre", rng=seed,
                           dtype=np.float32, norm_tier="fast", qk_norm=None if variant == "none" else variant)


def attention_inputs(model, tokens):
    """(attention, its input (B, T, C)) of every block of the Pre-LN ``model`` on ``tokens``,
    found by running the model's stages one by one (the input of a Pre-LN block's attention is
    norm1 of the block's input)."""
    assert model.position == "pre", "the attention's input is norm1(x) only in a Pre-LN block"
    for block, x in zip(model.blocks, residual_stream(model, tokens)):  # x: the block's input (B, T, C)
        yield block.attn, block.norm1(x)


def attention_logits(attn, h, capped=True):
    """The logits S = q k^T / sqrt(D) (B, H, T, T) of ``attn`` on its input ``h`` (B, T, C), with
    q and k recomputed from its weights (and its QK-norm, per head or over the whole projection
    as its ``qk_norm_scope`` says), soft-capped as the attention caps them (``capped=False``: the
    scores before the cap), their softmax P, and the (T, T) mask of the query-key pairs it may
    use; float64. Reads ``attn``'s weights, never changes them."""
    B, T, _ = h.shape

    def heads(t):  # (B, T, C) -> (B, H, T, D)
        return t.reshape(B, T, attn.num_heads, attn.head_dim).transpose(0, 2, 1, 3).astype(np.float64)

    per_head = attn.qk_norm_scope == "head"
    q, k = attn.q(h), attn.k(h)  # (B, T, C) each
    if attn.q_norm is not None and not per_head:
        q, k = attn.q_norm(q), attn.k_norm(k)  # (B, T, C): each query and key over all C channels
    q, k = heads(q), heads(k)  # (B, H, T, D) each
    if attn.q_norm is not None and per_head:
        q, k = attn.q_norm(q), attn.k_norm(k)  # each head's q and k normalised over its D channels
    S = q @ k.swapaxes(-1, -2) / math.sqrt(attn.head_dim)  # (B, H, T, T)
    if attn.attn_softcap is not None and capped:
        S = softcap(S, attn.attn_softcap)[0]  # (B, H, T, T): c * tanh(S / c)
    allowed = ~np.triu(np.ones((T, T), dtype=bool), k=1) if attn.causal else np.ones((T, T), dtype=bool)
    return S, softmax(np.where(allowed, S, -np.inf), axis=-1), allowed


def logit_bound(attn):
    """The largest |q.k| / sqrt(D) that ``attn``'s q_norm and k_norm allow, from their weights and
    biases (see the module docstring); inf without QK-norm."""
    if attn.q_norm is None:
        return math.inf
    D = attn.head_dim
    g_q, g_k = (np.asarray(n.gamma.data, dtype=np.float64) for n in (attn.q_norm, attn.k_norm))
    b_q, b_k = (np.zeros(D) if getattr(n, "beta", None) is None else np.asarray(n.beta.data, dtype=np.float64)
                for n in (attn.q_norm, attn.k_norm))
    return float(math.sqrt(D) * np.abs(g_q * g_k).max() + np.linalg.norm(g_q * b_k) + np.linalg.norm(b_q * g_k)
                 + abs(b_q @ b_k) / math.sqrt(D))


def measure(model, tokens):
    """Per block (L,), on ``tokens``: the largest |logit|, the mean attention entropy (nats, over
    heads, batch and queries) and the QK-norm bound."""
    largest, entropy, bound = [], [], []
    for attn, h in attention_inputs(model, tokens):
        S, P, allowed = attention_logits(attn, h)
        largest.append(np.abs(S[..., allowed]).max())
        plogp = np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)  # (B, H, T, T), 0 log 0 = 0
        entropy.append(-plogp.sum(axis=-1).mean())
        bound.append(logit_bound(attn))
    return np.array(largest), np.array(entropy), np.array(bound)


@single_thread()
def train(variant, lr, steps, seed):
    """Train one model with Adam at a constant ``lr``, measuring its attention every EVERY steps on
    a fixed batch. Returns loss (steps,), and max_logit, entropy, bound (steps // EVERY + 1, L)."""
    task = copy_task()
    model = model_for(variant, seed)
    optimizer = Adam(model.parameters(), lr=lr)
    batches = task.batches(BATCH_SIZE, seed + 1000)
    fixed = task.batch(BATCH_SIZE, seed + 2000)[0]
    loss, measured = [], [measure(model, fixed)]
    for _ in range(steps // EVERY):  # fit in chunks of EVERY steps, drawing from one stream of batches
        loss.append(fit(model, batches, optimizer, EVERY, progress=False)["loss"])
        measured.append(measure(model, fixed))
    max_logit, entropy, bound = (np.array(m) for m in zip(*measured))
    return {"loss": np.concatenate(loss), "max_logit": max_logit, "entropy": entropy, "bound": bound}


def final_loss(loss):
    """The mean of the last FINAL_STEPS losses; inf if any of them is not finite."""
    tail = loss[-FINAL_STEPS:]
    return float(tail.mean()) if np.all(np.isfinite(tail)) else math.inf


def uniform_entropy(seq_len):
    """The mean entropy of causal attention that spreads evenly over every allowed key: mean_t ln(t + 1)."""
    return float(np.log(np.arange(1, seq_len + 1)).mean())


@single_thread()
def run(quick=False, seed=0, progress=None):
    """Train every variant at every learning rate from ``n_seeds`` initialisations (seed, seed + 1,
    ...). ``loss`` is (variants, lrs, seeds, steps); ``max_logit``, ``entropy`` and ``bound`` are
    (variants, lrs, seeds, measurements, blocks), measured at ``measured_steps``."""
    quick = flag(quick, "quick", "experiments.qk_norm.run")
    if quick:
        steps, n_seeds, lrs = 150, 1, np.array([1e-2, HIGH_LR])
    else:
        steps, n_seeds, lrs = 200, 2, 10.0 ** np.linspace(-4, 0, 13)
    seeds = [seed + k for k in range(n_seeds)]
    runs = lr_sweep(VARIANTS, lrs, seeds, train, steps, progress)

    def stack(key):
        return np.array([[[runs[i, j, k][key] for k in range(n_seeds)] for j in range(len(lrs))]
                         for i in range(len(VARIANTS))])

    loss = stack("loss")
    final = np.vectorize(final_loss, signature="(n)->()")(loss)  # (variants, lrs, seeds)
    chance = math.log(copy_task().n_symbols)
    return {"variants": np.array(VARIANTS), "lrs": lrs, "seeds": np.array(seeds), "loss": loss,
            "final_loss": final, "trains": final < TRAINED * chance, "max_logit": stack("max_logit"),
            "entropy": stack("entropy"), "bound": stack("bound"), "measured_steps": np.arange(0, steps + 1, EVERY),
            "chance_loss": chance, "uniform_entropy": uniform_entropy(copy_task().seq_len),
            "high_lr": HIGH_LR, "high_lr_index": int(np.argmin(np.abs(np.log(lrs / HIGH_LR)))),
            "head_dim": D_MODEL // N_HEADS, "n_layers": N_LAYERS}


def _band(ax, x, values, variant, **kw):
    """The median over the last axis of ``values`` (x, seeds) as a line, its range as a band."""
    if values.shape[-1] > 1:
        ax.fill_between(x, values.min(axis=-1), values.max(axis=-1), color=COLORS[variant], alpha=0.2)
    ax.plot(x, np.median(values, axis=-1), **_plot.series(variant, COLORS, MARKERS, LINESTYLES), **kw)


def _spread(result):
    n = len(result["seeds"])
    return f"median and range of {n} seeds" if n > 1 else "one seed"


def _config(result):
    return (f"{result['n_layers']}-block Pre-LN Transformer (D = {result['head_dim']} per head) on the copy task, "
            f"Adam, constant lr, no warmup")


def plot_sweep(result, outdir):
    lrs, final = result["lrs"], np.minimum(result["final_loss"], 1e3)  # a diverged run drawn at 1e3
    last_logit = result["max_logit"][..., -1, :].max(axis=-1)  # (variants, lrs, seeds), at the last step
    with _plot.figure(ncols=2, size=(18, 7.5)) as (fig, (ax1, ax2)):
        for i, variant in enumerate(result["variants"]):
            _band(ax1, lrs, final[i], variant, label=LABELS[variant])
            _band(ax2, lrs, last_logit[i], variant, label=LABELS[variant])
        ax1.axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5,
                    label=f"chance, ln(10) = {result['chance_loss']:.2f}")
        ax1.axhline(TRAINED * result["chance_loss"], color=_plot.OKABE_ITO["grey"], linestyle="--", linewidth=2,
                    label=f"'trains': below {TRAINED:g} x chance")
        ax1.set(xscale="log", yscale="log", xlabel="learning rate (Adam, constant)",
                ylabel="final loss (cross-entropy, nats)", title="final loss (mean of the last 20 steps)")
        ax2.set(xscale="log", yscale="log", xlabel="learning rate (Adam, constant)",
                ylabel="largest |q.k| / sqrt(D) (max over blocks)", title="largest attention logit after training")
        ax1.legend(loc="lower left")  # the low learning rates' curves start at the top left
        ax2.legend(loc="upper left")
        fig.suptitle(f"{_config(result)}, {len(result['measured_steps']) * EVERY - EVERY} steps ({_spread(result)})")
        return _plot.save(fig, outdir, NAME)


def plot_logits(result, outdir):
    j = result["high_lr_index"]
    steps, measured = np.arange(1, result["loss"].shape[-1] + 1), result["measured_steps"]
    with _plot.figure(ncols=3, size=(24, 7.5)) as (fig, (ax1, ax2, ax3)):
        for i, variant in enumerate(result["variants"]):
            label = LABELS[variant]
            _band(ax1, steps, np.array([smooth(r) for r in result["loss"][i, j]]).T, variant, label=label,
                  markevery=(10 * (i + 1), len(steps) // 5))
            _band(ax2, measured, result["max_logit"][i, j].max(axis=-1).T, variant, label=label)
            _band(ax3, measured, result["entropy"][i, j].mean(axis=-1).T, variant, label=label)
            if variant in BOUND_STYLES:
                bound = np.median(result["bound"][i, j].max(axis=-1), axis=0)
                ax2.plot(measured, bound, linewidth=2, label=f"{label}: bound from its weights",
                         **BOUND_STYLES[variant])
        ax1.axhline(result["chance_loss"], color="black", linestyle=":", linewidth=2.5, label="chance, ln(10)")
        ax3.axhline(result["uniform_entropy"], color="black", linestyle=":", linewidth=2.5,
                    label="attention spread evenly")
        ax1.set(xlabel="training step", ylabel="training loss (nats, 10-step mean)", title="loss")
        ax2.set(yscale="log", xlabel="training step", ylabel="largest |q.k| / sqrt(D) (max over blocks)",
                title="largest attention logit")
        ax3.set(xlabel="training step", ylabel="mean attention entropy (nats)", title="attention entropy")
        for ax, loc in ((ax1, "upper right"), (ax2, "center right"), (ax3, "center right")):
            ax.legend(loc=loc)
        fig.suptitle(f"{_config(result)}, lr = {result['lrs'][j]:g}; measured every {EVERY} steps on a fixed "
                     f"batch ({_spread(result)})")
        return _plot.save(fig, outdir, f"{NAME}_logits")


def plot(result, outdir):
    return [plot_sweep(result, outdir), plot_logits(result, outdir)]
