"""``step_through``: build a kind's tape, run its backward node by node and check it.

    st = step_through("layernorm", shape=(3, 4), seed=0)
    print(st.text())               # the forward, the backward node by node, the checks
    st.tape["rstd"].grad           # dL/d rstd, from the elementary rules alone
    st.passed                      # every check exact or close

The kinds live in their families (``normalization``, ``losses``, ``blocks``, ``attention``,
``modern``, ``layers``, ``weights``, ``logits``), each of which registers its own (``registry``); this module imports
them once, so that ``KINDS`` holds every kind, and hands a request to the kind's builder.
"""

import numpy as np

from .._array import flag
from ..i18n import translator
# the families, in the order their kinds are listed: importing one registers its kinds
from . import normalization, losses, blocks, attention, modern, layers, weights, logits  # noqa: F401
from .core import GradientComparison, StepThrough, layer_eps  # noqa: F401  (the public names)
from .losses import LOSS_AND_ACTIVATION_KINDS  # noqa: F401
from .normalization import DROPOUT_P, standardize_tape  # noqa: F401
from .registry import KINDS, accepting, find
from .registry import options as every_option
from .tape import Tape  # noqa: F401

_ = translator("explain")


def option_error(option, kind):
    """The message for ``option`` given to ``kind``, which does not accept it: it names every
    kind that does."""
    takers = accepting(option)
    message = (_("{option} applies to the {kinds} step-through only, got {title}") if len(takers) == 1 else
               _("{option} applies to the {kinds} step-throughs only, got {title}"))
    return message.format(option=option, kinds=_(" and ").join(_(k.title) for k in takers), title=_(kind.title))


def step_through(kind, x=None, *, shape=(3, 4), seed=0, gamma=None, beta=None, dy=None, h=1e-6, **options):
    """Build the tape of ``kind`` (one of ``KINDS``, in any case), run its backward and check it;
    returns a ``StepThrough``.

    x : the input (default: random of ``shape``, mean about 1, spread about 2, from ``seed``;
        attention's standard normal). BatchNorm takes (N, C), (N, C, L) or (N, C, H, W) and
        normalises each channel over the other axes; LayerNorm and RMSNorm normalise over the
        last axis; softmax runs over it; DyT works element by element, with gamma and beta over
        the last axis. Log-softmax runs over the last axis, cross_entropy takes (N, C) logits,
        GELU works element by element. Linear takes (*, D) into Linear(D, D + 1), FeedForward
        (*, D) through Linear(D, 2D), ReLU and Linear(2D, D); ReLU, Sigmoid and Tanh work
        element by element; mse compares x with a random target of its shape; embedding's x is
        the table (V, D), looked up at V + 1 random ids (so one repeats). See
        ``derivations.layers``.
    gamma, beta : the layer's parameters (default: random, from ``seed``; never 1 and 0, which
        would hide mistakes in their gradients).
    alpha : DyT's scalar alpha (default: random, from ``seed``); one number for every
        element, so its gradient sums over all of them.
    dy : the upstream gradient dL/dy (default: random);
        the loss is L = sum(y * dy).
    causal : softmax and attention: set the scores above the diagonal of the last two (square)
        axes to -inf, as attention's causal mask does (query i may not look at key j > i).
    groups : GroupNorm's G (default 2 when C is even and a group keeps 3 values or more, else
        1). GroupNorm takes (N, C, *S), InstanceNorm (N, C, L), (N, C, H, W) or one unbatched
        sample (C, L); both standardise each group of values K = C/G * S as LayerNorm does.
    p : dropout's probability of dropping an element (default 0.5); the mask is drawn once,
        from ``seed``, and the layer (in training mode) draws the same one.
    target : cross_entropy only: the class index of each row of the (N, C) logits (default:
        random, from ``seed``). The loss is the output, so dy is a scalar (default 1).
    position : residual only: where its LayerNorm sits, "pre" (default), "post", "deepnorm",
        "peri", "reordered" or "none", as in ``TransformerBlock``; x is (T, D) or (B, T, D) and
        the sub-layer a Linear(D, D) (``normcore.derivations.blocks``).
    layer_index : residual with position "pre" only: LayerNorm Scaling at depth l >= 1, the
        norm's output times 1 / sqrt(l).
    heads : attention only (default 1): self-attention on x (T, D) or (B, T, D) with ``heads``
        heads, which must divide D; ``causal`` masks the future. See ``derivations.attention``.
    qk_norm : the qk_norm step-through's norm, "rmsnorm" (default) or "layernorm"; x is q, of
        shape (T, D), (H, T, D) or (B, H, T, D), k is drawn like it, the output is the scores.
    ranks : the sync_batchnorm step-through's simulated ranks (default 2); x is the whole batch,
        split along N (the first ranks hold one row more when N is not a multiple).

    Any other option is one a kind registers (``registry.Kind.options``); a kind that does not
    take an option given refuses it, naming the kinds that do.
    """
    spec = find(kind)
    unknown = sorted(set(options) - set(every_option()))
    if unknown:
        raise TypeError(f"step_through() got an unexpected keyword argument {unknown[0]!r}; expected one "
                        f"of the options {', '.join(every_option())}")
    if "causal" in options:
        options["causal"] = flag(options["causal"], "causal", "step_through") or None  # False: not given
    for option, value in options.items():
        if value is not None and option not in spec.options:
            raise ValueError(option_error(option, spec))
    rng = np.random.default_rng(seed)
    if x is None:
        x = rng.standard_normal(tuple(shape)) * spec.spread + spec.mean
    else:
        x = np.array(x, dtype=np.float64)
    if x.ndim not in spec.ranks:
        if spec.shapes:
            raise ValueError(_("the {title} step-through takes x of shape {shapes}, got shape {shape}").format(
                title=_(spec.title), shapes=spec.shapes, shape=x.shape))
        raise ValueError(_("the {title} step-through takes an input of rank {ranks}, got shape {shape}").format(
            title=_(spec.title), ranks=_(" or ").join(map(str, spec.ranks)), shape=x.shape))
    accepted = {option: options.get(option) for option in spec.options}
    if "causal" in accepted:
        accepted["causal"] = bool(accepted["causal"])
    return spec.build(spec.name, spec.title, x, rng, dy=dy, h=h, gamma=gamma, beta=beta, **accepted)


__all__ = ["step_through", "StepThrough", "GradientComparison", "KINDS", "option_error"]
