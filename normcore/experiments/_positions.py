"""What the Transformer experiments share: the norm positions compared, their colours, the small
model and task they measure, and the gradient norms of a model's blocks at initialisation.

Every experiment about where the norm sits (pre_post_gradients, warmup, output_change,
effective_depth) compares the same three positions with the same colours, markers and line
styles (``_plot.series(position, COLORS, MARKERS, LINESTYLES)``)::

    "post"      x_{l+1} = LN(x_l + F(x_l))                 the original Transformer
    "pre"       x_{l+1} = x_l + F(LN(x_l))                 GPT-2 and most models since
    "deepnorm"  x_{l+1} = LN(alpha * x_l + F(x_l))         DeepNet: alpha = (2N)**(1/4)

and the Peri-LN experiment adds a fourth, drawn in the same family::

    "peri"      x_{l+1} = x_l + LN_out(F(LN_in(x_l)))      Gemma 2 and 3, Kim et al. 2025

and the curse-of-depth experiment three more (``OPTIONS`` gives each one's model options)::

    "reordered" x_{l+1} = x_l + LN(F(x_l))                 OLMo 2
    "lns"       x_{l+1} = x_l + F(LN(x_l) / sqrt(l+1))     LayerNorm Scaling (Sun et al. 2025)
    "mix"       Post-LN in the first quarter of the blocks, Pre-LN after (Mix-LN, Li et al. 2024)
"""

import numpy as np

from .. import tasks
from ..nn import CrossEntropyLoss, TinyTransformer
from ..optim import grad_norm
from ..train import loss_and_backward
from ._plot import OKABE_ITO

POSITIONS = ("post", "pre", "deepnorm")
COLORS = {"post": OKABE_ITO["vermillion"], "pre": OKABE_ITO["blue"], "deepnorm": OKABE_ITO["green"],
          "peri": OKABE_ITO["purple"], "reordered": OKABE_ITO["orange"], "lns": OKABE_ITO["sky_blue"],
          "mix": OKABE_ITO["black"]}
MARKERS = {"post": "o", "pre": "s", "deepnorm": "^", "peri": "D", "reordered": "v", "lns": "P", "mix": "X"}
LINESTYLES = {"post": "-", "pre": "--", "deepnorm": "-.", "peri": ":", "reordered": (0, (1, 1)),
              "lns": (0, (6, 2, 1, 2)), "mix": (0, (3, 1, 1, 1, 1, 1))}
LABELS = {"post": "Post-LN", "pre": "Pre-LN", "deepnorm": "DeepNorm", "peri": "Peri-LN", "reordered": "reordered",
          "lns": "LayerNorm Scaling", "mix": "Mix-LN"}
# The TinyTransformer options of each name above (default: the name is the position).
OPTIONS = {"lns": {"position": "pre", "norm_scale": "depth"}}

D_MODEL = 32
N_HEADS = 4


def labelling_task():
    """A task scored at every position (16 tokens, 16 symbols, 16 labels), so that the loss and
    its gradient at initialisation average over many predictions."""
    return tasks.TeacherLabellingTask(seq_len=16, n_symbols=16, n_labels=16)


def tiny_model(task, position, n_layers, seed, dtype=np.float64, embedding_std=1.0, activation="gelu",
               norm_tier="reference"):
    """The TinyTransformer every experiment here uses: d_model 32, 4 heads, the norm at ``position``
    (a name of ``LABELS``: a position, or "lns", whose options ``OPTIONS`` gives).

    ``embedding_std``: the standard deviation of the token and position embeddings; a small one
    (GPT-2 uses 0.02) leaves the residual stream to the blocks' outputs from the first block on.
    ``activation``: the feed-forward's (default GELU), e.g. the ReLU of the original Transformer.
    """
    options = OPTIONS.get(position, {"position": position})
    return TinyTransformer(task.vocab_size, D_MODEL, n_layers, N_HEADS, task.seq_len, rng=seed, dtype=dtype,
                           activation=activation, embedding_std=embedding_std, norm_tier=norm_tier, **options)


def residual_stream(model, tokens):
    """Yield the residual stream of a TinyTransformer on ``tokens``: x_0 (the embeddings, entering
    block 1), then x_1, ..., x_L (leaving each block), each (B, T, C); the stages of its forward
    up to the final norm, run one block at a time."""
    x = model.pos_emb(model.tok_emb(tokens))  # (B, T, C)
    yield x
    for block in model.blocks:
        x = block(x)  # (B, T, C)
        yield x


def block_grad_norms(model, tokens, targets):
    """One forward and backward of the cross-entropy loss; the gradient norm of each block, (L,)."""
    model.zero_grad()
    loss_and_backward(model, CrossEntropyLoss(), model(tokens), targets)
    return np.array([grad_norm(block.parameters()) for block in model.blocks])


def loglog_slope(x, y):
    """The least-squares slope of log(y) against log(x): the exponent p in y ~ x**p."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def lr_sweep(variants, lrs, seeds, train, steps, progress=None):
    """{(i, j, k): train(variants[i], lrs[j], steps, seeds[k])} over every variant, learning rate
    and seed, in that order; ``progress(done, total, what)`` is told after each run."""
    runs, total = {}, len(variants) * len(lrs) * len(seeds)
    for i, variant in enumerate(variants):
        for j, lr in enumerate(lrs):
            for k, s in enumerate(seeds):
                runs[i, j, k] = train(variant, float(lr), steps, s)
                if progress is not None:
                    progress(len(runs), total, f"{variant} lr={lr:.2g} seed {s}")
    return runs
