"""Step-throughs of the norms and their neighbours: BatchNorm, LayerNorm, RMSNorm, DyT,
GroupNorm and InstanceNorm, dropout and softmax, as tapes of elementary nodes, with the staged
gradient checked against the layer's compact backward and central differences.

    st = step_through("layernorm", shape=(3, 4), seed=0)
    print(st.text())               # the forward, the backward node by node, the checks
    st.tape["rstd"].grad           # dL/d rstd, from the elementary rules alone
    st.passed                      # every check exact or close

The tape uses the layer's own parameters (random gamma and beta) and eps, so the comparison is
with exactly the computation ``layer.forward`` / ``layer.backward`` perform.
"""

import numpy as np

from .. import norms
from .._array import real_number
from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn import Dropout, Softmax
from .core import (GROUPED, StepThrough, affine, check, input_upstream, layer_eps, letters, rms_normalize,
                   softmax_nodes, standardize)
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")

DROPOUT_P = 0.5  # dropout's default probability of dropping an element


# --- the tapes -------------------------------------------------------------------------------
def standardize_tape(x, gamma, beta, eps, axes, over, over_params):
    """mean, centre, square, variance, add eps, rsqrt, normalise, scale, shift (BN and LN)."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    x_hat = standardize(t, x, eps, axes, over, "x_hat", r"\hat{x}")
    affine(t, x_hat, g, b, over_params)
    return t


def rms_tape(x, gamma, eps, axes, over, over_params):
    """square, mean, add eps, rsqrt, normalise, scale (RMSNorm: no centring, no beta)."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    x_hat = rms_normalize(t, x, eps, axes, over, "x_hat", r"\hat{x}")
    affine(t, x_hat, g, None, over_params)
    return t


def dyt_tape(x, alpha, gamma, beta, over_all, over_params):
    """scale by alpha, tanh, scale, shift (DyT: no statistics, every step element by element)."""
    t = Tape()
    x = t.leaf("x", x)
    a = t.leaf("alpha", alpha, r"\alpha")
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    u = t.mul(a, x, "u", N_("scale by alpha"), "u", over_a=over_all)  # alpha: one number for all
    th = t.tanh(u, "t", N_("tanh"), "t")
    affine(t, th, g, b, over_params)
    return t


def grouped_tape(x, gamma, beta, eps, grouped, over_params):
    """GroupNorm and InstanceNorm: reshape (N, C, *S) to (N, G, K) with K = C/G * S values per
    group, standardise each group as LayerNorm does over K, reshape back, then the per-channel
    scale and shift."""
    t = Tape()
    x = t.leaf("x", x)
    g = t.leaf("gamma", gamma, r"\gamma")
    b = t.leaf("beta", beta, r"\beta")
    xg = t.reshape(x, grouped, "xg", N_("group"), "x_g")
    xg_hat = standardize(t, xg, eps, (2,), "K", "xg_hat", r"\hat{x}_g")
    x_hat = t.reshape(xg_hat, x.value.shape, "x_hat", N_("ungroup"), r"\hat{x}")
    affine(t, x_hat, g, b, over_params)
    return t


def dropout_tape(x, mask, p):
    """mask, then scale: y = x * mask * 1/(1-p), with a fixed mask (training mode)."""
    t = Tape()
    x = t.leaf("x", x)
    kept = t.scale(x, mask.astype(np.float64), "mask", "kept", N_("mask"), "k", "m", constant_first=False)
    t.scale(kept, 1.0 / (1.0 - p), "1/(1-p)", "y", N_("scale"), "y", r"\tfrac{1}{1-p}", constant_first=False)
    return t


def softmax_tape(s, axis, over):
    """max, shift, exp, sum, reciprocal, normalise: p = exp(s - max) / sum(exp(s - max))."""
    t = Tape()
    softmax_nodes(t, t.leaf("s", s), axis, over)
    return t


# --- the step-throughs -----------------------------------------------------------------------
GROUPED_DX = "dx = reshape(rstd * (dx_hat - mean_K(dx_hat) - x_hat * mean_K(dx_hat * x_hat)))"
COMPACT = {
    "batchnorm": "dx = rstd * (dx_hat - mean_N(dx_hat) - x_hat * mean_N(dx_hat * x_hat)),"
                 " dx_hat = dy * gamma",
    "layernorm": "dx = rstd * (dx_hat - mean_D(dx_hat) - x_hat * mean_D(dx_hat * x_hat)),"
                 " dx_hat = dy * gamma",
    "rmsnorm": "dx = rrms * (dx_hat - x_hat * mean_D(dx_hat * x_hat)), dx_hat = dy * gamma",
    "dyt": "dx = alpha * du, du = dy * gamma * (1 - t**2); dalpha = sum_all(du * x)",
    "groupnorm": Phrase(N_("{dx}, on the groups (N, G, K), {dx_hat}"), dx=GROUPED_DX, dx_hat="dx_hat = dy * gamma"),
    "instancenorm": Phrase(N_("{dx}, on the instances (N, C, K), {dx_hat}"), dx=GROUPED_DX,
                           dx_hat="dx_hat = dy * gamma"),
    "dropout": Phrase(N_("{dx}: the same mask as the forward"), dx="dx = dy * mask / (1 - p)"),
    "softmax": "ds = p * (dp - sum_D(dp * p)), dp = dL/dp",
}


def norm_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, alpha=None, groups=None, p=None,
                      causal=False):
    """The step-through of a norm, dropout or softmax on the input ``x``, its parameters (and
    dropout's mask) drawn from ``rng`` after x; see ``steps.step_through`` for the arguments."""
    if causal:
        if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
            raise ValueError(_("causal=True needs square last two axes (attention scores T x T), "
                               "got shape {shape}").format(shape=x.shape))
        above = np.triu_indices(x.shape[-1], 1)
        x[..., above[0], above[1]] = -np.inf
    axis_letters = letters(kind, x.ndim)
    if kind == "batchnorm":
        if x.size // x.shape[1] < 2:
            raise ValueError(_("BatchNorm needs more than one value per channel, got input of shape {shape}")
                             .format(shape=x.shape))
        axes = (0,) + tuple(range(2, x.ndim))
        layer = (norms.BatchNorm1d if x.ndim < 4 else norms.BatchNorm2d)(x.shape[1])
        view = (x.shape[1],) if x.ndim == 2 else (1, x.shape[1]) + (1,) * (x.ndim - 2)
    elif kind == "softmax":
        axes, layer = (x.ndim - 1,), Softmax(axis=-1)
    elif kind in GROUPED:
        layer, grouped, c_axis = _grouped_layer(kind, title, x, groups)
        axes = tuple(a for a in range(x.ndim) if a != c_axis)  # gamma and beta are shared along these
        channels = x.shape[c_axis]
        view = (channels,) if c_axis == x.ndim - 1 else (1,) * c_axis + (channels,) + (1,) * (x.ndim - c_axis - 1)
    elif kind == "dropout":
        p = DROPOUT_P if p is None else real_number(p, "p", "step_through")
        if not 0.0 <= p < 1.0:
            raise ValueError(_("dropout's p must be at least 0 and below 1 (p = 1 drops every element), got {p}")
                             .format(p=p))
        axes = tuple(range(x.ndim))
    else:
        axes = (x.ndim - 1,)
        layer = {"layernorm": norms.LayerNorm, "rmsnorm": norms.RMSNorm, "dyt": norms.DyT}[kind](x.shape[-1])
        view = (x.shape[-1],)
    over = ",".join(axis_letters[a] for a in axes)
    # gamma and beta are shared along the statistics' axes (BatchNorm) or the leading axes
    param_axes = axes if kind in ("batchnorm",) + GROUPED else range(x.ndim - 1)
    over_params = ",".join(axis_letters[a] for a in param_axes) or None

    if kind not in ("softmax", "dropout"):
        randomize_parameters(layer, rng)
        if gamma is not None:
            layer.weight.data[...] = np.asarray(gamma, dtype=np.float64).reshape(layer.weight.shape)
        if beta is not None and layer.bias is not None:
            layer.bias.data[...] = np.asarray(beta, dtype=np.float64).reshape(layer.bias.shape)
        if alpha is not None and kind == "dyt":
            layer.alpha.data[...] = np.asarray(alpha, dtype=np.float64).reshape(1)
    dy = input_upstream(dy, rng, x.shape)

    detail, mask = "", None
    if kind == "softmax":
        eps = 0.0
        tape = softmax_tape(x, axes[0], over)
    elif kind == "dropout":
        mask_seed = int(rng.integers(2 ** 31))  # the layer draws its mask from the same seed
        mask = np.random.default_rng(mask_seed).random(x.shape) >= p
        layer = Dropout(p, rng=mask_seed)
        eps, over = 0.0, ",".join(axis_letters)
        detail = Phrase(N_("training mode, p = {p}: a fixed mask keeps {kept} of {size} elements, "
                           "scaled by 1/(1-p) = {scale}"),
                        p=f"{p:g}", kept=int(mask.sum()), size=mask.size, scale=f"{1 / (1 - p):.4g}")
        tape = dropout_tape(x, mask, p)
    elif kind in GROUPED:
        eps, over = layer.eps, "K"
        detail = Phrase(N_("reshaped to {shape}, statistics over K = {k} values per group, eps = {eps}")
                        if kind == "groupnorm" else
                        N_("reshaped to {shape}, statistics over K = {k} values per instance, eps = {eps}"),
                        shape=grouped, k=grouped[2], eps=f"{eps:.3g}")
        tape = grouped_tape(x, layer.weight.data.reshape(view), layer.bias.data.reshape(view), eps,
                            grouped, over_params)
    elif kind == "dyt":
        eps, over = 0.0, ",".join(axis_letters)  # no statistics: alpha's gradient sums over every axis
        tape = dyt_tape(x, layer.alpha.data, layer.weight.data.reshape(view), layer.bias.data.reshape(view),
                        over, over_params)
    else:
        eps = layer_eps(layer)
        gamma_v = layer.weight.data.reshape(view)
        if kind == "rmsnorm":
            tape = rms_tape(x, gamma_v, eps, axes, over, over_params)
        else:
            tape = standardize_tape(x, gamma_v, layer.bias.data.reshape(view), eps, axes, over, over_params)
    # the reference: the layer's own forward and compact backward
    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {tape.nodes[0].name: layer.backward(dy)}
    reference.update({{"alpha": "alpha", "weight": "gamma", "bias": "beta"}[n]: p.grad
                      for n, p in layer.named_parameters()})
    reference_name = f"{type(layer).__name__}.backward"

    st = StepThrough(kind, title, tape, dy, eps, over, reference_name, COMPACT[kind], what=detail, mask=mask)
    check(st, y_ref, reference, h)
    st.properties = _properties(kind, tape, axes, over, mask, p)
    return st


def _grouped_layer(kind, title, x, groups):
    """GroupNorm's or InstanceNorm's layer for x, the grouped shape (N, G, K) and the channel axis."""
    c_axis = 0 if kind == "instancenorm" and x.ndim == 2 else 1  # (C, L): one unbatched sample
    n, channels = (1 if c_axis == 0 else x.shape[0]), x.shape[c_axis]
    spatial = x.size // (n * channels)
    if kind == "instancenorm":  # one group per channel
        layer = (norms.InstanceNorm1d if x.ndim < 4 else norms.InstanceNorm2d)(channels, affine=True)
        groups = channels
    else:
        if groups is None:
            groups = 2 if channels % 2 == 0 and channels // 2 * spatial >= 3 else 1  # K = 2: x_hat = +-1
        if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1 \
                or channels % groups:
            raise ValueError(_("groups must divide the {channels} channels of shape {shape}, got {groups}").format(
                channels=channels, shape=x.shape, groups=groups))
        layer = norms.GroupNorm(int(groups), channels)
    grouped = (n, int(groups), channels // groups * spatial)
    if grouped[2] < 2:
        raise ValueError(_("the {title} step-through needs more than one value per group (C/G * spatial "
                           "positions), got input of shape {shape} with G = {groups}").format(
            title=title, shape=x.shape, groups=groups))
    return layer, grouped, c_axis


def _properties(kind, tape, axes, over, mask=None, p=None):
    """What the input gradient must satisfy, measured: each value should be 0 up to rounding."""
    first = tape.nodes[0]
    dx = first.grad
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    if kind == "softmax":
        return [(Phrase(N_("{sum}: softmax ignores a shift of its row"), sum=f"sum_{over}(ds)"),
                 worst(dx.sum(axis=axes)))]
    if kind == "dyt":  # no reduction: nothing sums to zero, but each dx is its own x's business
        t, alpha = tape["t"].value, tape["alpha"].value
        return [(Phrase(N_("{diff}: element by element, no term mixing elements"),
                        diff="dx - alpha * gamma * (1 - t**2) * dy"),
                 worst(dx - alpha * tape["gamma"].value * (1 - t * t) * tape.output.grad)),
                (Phrase(N_("{diff}: alpha scales x, so its gradient is dx's against x"),
                        diff="dalpha - sum(dx * x) / alpha"),
                 worst(tape["alpha"].grad - np.sum(dx * first.value) / alpha))]
    if kind == "dropout":
        dy = tape.output.grad
        return [(Phrase(N_("dx where the mask dropped x: no gradient reaches a dropped element")),
                 worst(dx[~mask]) if (~mask).any() else 0.0),
                (Phrase(N_("{diff}: dy passes through the forward's mask"), diff="dx - dy * mask / (1-p)"),
                 worst(dx - dy * mask / (1.0 - p)))]
    if kind in GROUPED:  # the properties hold per group, on the reshape (N, G, K)
        dx, x_hat, axes = dx.reshape(tape["xg"].value.shape), tape["xg_hat"].value, (2,)
    else:
        x_hat = tape["x_hat"].value
    props = [(Phrase(N_("{sum}: the output ignores a rescaling of x (up to eps)"), sum=f"sum_{over}(dx * x_hat)"),
              worst(np.sum(dx * x_hat, axis=axes)))]
    if kind != "rmsnorm":
        props.insert(0, (Phrase(N_("{sum}: the output ignores a shift of x"), sum=f"sum_{over}(dx)"),
                         worst(dx.sum(axis=axes))))
    return props


# --- the kinds -------------------------------------------------------------------------------
register("batchnorm", "BatchNorm", (2, 3, 4), norm_step_through,
         description=N_("each channel standardised over the batch (and L, or H and W)"))
register("layernorm", "LayerNorm", (1, 2, 3, 4), norm_step_through,
         description=N_("each row standardised over its last axis"))
register("rmsnorm", "RMSNorm", (1, 2, 3, 4), norm_step_through,
         description=N_("each row divided by its root mean square, no centring"))
register("dyt", "DyT", (1, 2, 3, 4), norm_step_through, options=("alpha",),
         description=N_("gamma * tanh(alpha * x) + beta, element by element"))
register("groupnorm", "GroupNorm", (2, 3, 4), norm_step_through, options=("groups",),
         description=N_("each group of channels standardised per sample"))
register("instancenorm", "InstanceNorm", (2, 3, 4), norm_step_through,
         description=N_("each channel standardised per sample"))
register("dropout", "Dropout", (1, 2, 3, 4), norm_step_through, options=("p",),
         description=N_("a fixed mask, the kept elements scaled by 1/(1-p)"))
register("softmax", "softmax", (1, 2, 3, 4), norm_step_through, options=("causal",),
         description=N_("softmax over the last axis"))
