"""Step-throughs of Batch Renormalization, whose r and d pass through a stop-gradient, of
WeightNorm's weight path, whose direction's gradient is a projection, and of a residual branch
scaled by LayerScale or ReZero, whose scale starts near 0.

    st = step_through("batch_renorm", shape=(4, 3))  # BatchRenorm1d(3), running statistics from the seed
    st.tape["r"].held                                # True: its backward sends 0 to r_clip
    st = step_through("weight_norm", shape=(3, 4))   # WeightNorm(Linear(4, 5)), x of shape (3, 4)
    st.tape["v"].grad                                # orthogonal to v, row by row
    st = step_through("rezero", shape=(3, 4))        # y = x + alpha * (x @ W + b), alpha = 0

Batch Renorm's backward is not the derivative of its forward: r and d depend on the batch, yet
the paper holds them constant. The tape says so with a node of its own, ``Tape.stop_gradient``
(backward: 0), and its numerical checks replay the tape with r and d held at their values, the
function the backward differentiates; a note measures how far the forward's own derivative is.
The stop-gradient is the paper's (Ioffe 2017, arXiv:1702.03275, Algorithm 1: r and d are
stop_gradient of their clipped values); TensorFlow's BatchNormalization(renorm=True) does the
same (``array_ops.stop_gradient(r, name='renorm_r')``, and d likewise).
"""

import numpy as np

from .. import norms
from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn import LayerScale, Linear, ReZero, WeightNorm
from .core import StepThrough, affine, check, letters, no_gamma_beta, standardize, upstream
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")

R_MAX, D_MAX = 3.0, 5.0  # BatchRenorm's defaults, the limits the paper relaxes to
COMPACT = {
    "batch_renorm": Phrase(N_("{dx}: BatchNorm's, with r held constant"),
                           dx="dx = rstd * (dx_hat - mean_N(dx_hat) - x_hat * mean_N(dx_hat * x_hat)), "
                              "dx_hat = dy * gamma * r"),
    "weight_norm": "dv = (g / ||v||) * (dw - (dw . v_hat) v_hat), dg = dw . v_hat, dw = dy^T @ x",
    "layer_scale": "dx = dy + (gamma * dy) @ W^T, dW = x^T @ (gamma * dy), dgamma = sum_rows(dy * f)",
    "rezero": "dx = dy + (alpha * dy) @ W^T, dW = x^T @ (alpha * dy), dalpha = sum_all(dy * f)",
}


# --- Batch Renorm ----------------------------------------------------------------------------
def batch_renorm_tape(x, gamma, beta, run_mean, run_std, eps, r_max, d_max, axes, over):
    """BatchNorm's standardisation, then r = sg(clip(sigma_B / sigma, 1/r_max, r_max)) and
    d = sg(clip((mean - mu) / sigma, -d_max, d_max)) from the running mean mu and the running
    sigma (leaves: running statistics, not parameters), y = (x_hat * r + d) * gamma + beta."""
    t = Tape()
    x = t.leaf("x", x)
    g, b = t.leaf("gamma", gamma, r"\gamma"), t.leaf("beta", beta, r"\beta")
    mu = t.leaf("run_mean", run_mean, r"\mu_{\mathrm{run}}", step=N_("running statistic"))
    sigma = t.leaf("run_std", run_std, r"\sigma_{\mathrm{run}}", step=N_("running statistic"))
    x_hat = standardize(t, x, eps, axes, over, "x_hat", r"\hat{x}")
    # d: how far the batch's mean is from the running one, in running sigmas
    dev = t.sub(t["mean"], mu, "dev", N_("deviation"), r"\mathrm{dev}")
    d_raw = t.div(dev, sigma, "d_raw", N_("divide"), r"d_0")
    d_clip = t.clip(d_raw, -d_max, d_max, "d_clip", N_("clip"), r"d_c", ("-d_max", "d_max"),
                    (r"-d_{\max}", r"d_{\max}"))
    d = t.stop_gradient(d_clip, "d", N_("stop-grad"), "d")
    # r: the batch's sigma against the running one
    std = t.sqrt(t["var_eps"], "std", N_("sqrt"), r"\sigma_B")
    r_raw = t.div(std, sigma, "r_raw", N_("divide"), r"r_0")
    r_clip = t.clip(r_raw, 1.0 / r_max, r_max, "r_clip", N_("clip"), r"r_c", ("1/r_max", "r_max"),
                    (r"1/r_{\max}", r"r_{\max}"))
    r = t.stop_gradient(r_clip, "r", N_("stop-grad"), "r")
    xr = t.mul(x_hat, r, "xr", N_("rescale"), "u", over_b=over)
    z = t.add(xr, d, "z", N_("recentre"), "z", over_b=over)
    affine(t, z, g, b, over)
    return t


def _renorm_lanes():
    """The graph's rows: d's chain above the mean, the batch's sigma and the running one below
    the variance, r's chain, gamma and beta below x_hat (a tape this long is drawn in two bands,
    x_hat starting the second), so that d reaches z from above."""
    rows = {"run_mean": 2, "dev": 2, "d_raw": 2, "d_clip": 2, "d": 2, "std": -2, "run_std": -2}
    return {**rows, "r_raw": -1, "r_clip": -1, "r": -1, "gamma": -1, "beta": -1}


def batch_renorm_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None):
    """x of shape (N, C, *L) through BatchRenorm1d (or 2d) in training, its running statistics
    drawn from ``rng`` (as after earlier batches), then gamma and beta; see ``steps.step_through``."""
    if x.size // x.shape[1] < 2:
        raise ValueError(_("BatchRenorm needs more than one value per channel, got input of shape {shape}")
                         .format(shape=x.shape))
    C = x.shape[1]
    layer = (norms.BatchRenorm1d if x.ndim < 4 else norms.BatchRenorm2d)(C, r_max=R_MAX, d_max=D_MAX)
    layer.running_mean[...] = rng.standard_normal(C)
    layer.running_var[...] = np.exp(rng.standard_normal(C) - 1.0)  # sigma about 0.6: r about 3
    randomize_parameters(layer, rng)
    if gamma is not None:
        layer.weight.data[...] = np.asarray(gamma, dtype=np.float64).reshape(C)
    if beta is not None:
        layer.bias.data[...] = np.asarray(beta, dtype=np.float64).reshape(C)
    axis_letters = letters("batchnorm", x.ndim)
    axes = (0,) + tuple(range(2, x.ndim))
    over = ",".join(axis_letters[a] for a in axes)
    view = (C,) if x.ndim == 2 else (1, C) + (1,) * (x.ndim - 2)
    eps = layer.eps
    run_mean = layer.running_mean.copy().reshape(view)
    run_std = np.sqrt(layer.running_var.reshape(view) + eps)
    tape = batch_renorm_tape(x, layer.weight.data.reshape(view), layer.bias.data.reshape(view), run_mean,
                             run_std, eps, R_MAX, D_MAX, axes, over)
    dy = upstream(dy, rng, x.shape)

    # the reference: the layer's own forward (training) and compact backward
    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {"x": layer.backward(dy), "gamma": layer.weight.grad, "beta": layer.bias.grad}
    what = Phrase(N_("{layer} in training, statistics over {over}, eps = {eps:.3g}; running statistics drawn "
                     "from the seed, {sigma}"), layer=f"{type(layer).__name__}({C}, r_max={R_MAX:g}, "
                                                     f"d_max={D_MAX:g})",
                  over=over, eps=eps, sigma="run_std = sqrt(running_var + eps)")
    st = StepThrough(kind, title, tape, dy, eps, over, f"{type(layer).__name__}.backward", COMPACT[kind],
                     what=what, route_names={"mean": N_("mean"), "variance": N_("variance")})
    check(st, y_ref, reference, h)
    st.notes = renorm_notes(tape, dy, h, axes)
    st.properties = _renorm_properties(tape, axes, over, eps)
    st.lanes = _renorm_lanes()
    return st


def clipped_channels(tape, name, axes):
    """The channels where ``name`` (r or d) sits at a bound of its clip, as a list of indices."""
    raw, clipped = tape[f"{name}_raw"].value, tape[f"{name}_clip"].value
    return [int(c) for c in np.flatnonzero((raw != clipped).any(axis=axes))]


def renorm_notes(tape, dy, h, axes):
    """What the stop-gradient does, and how far the forward's own derivative is from the
    backward's, measured: central differences with r and d recomputed at every nudge."""
    x = tape["x"]
    channels = x.value.shape[1]
    r_at, d_at = clipped_channels(tape, "r", axes), clipped_channels(tape, "d", axes)
    both = sorted(set(r_at) & set(d_at))
    free = [c for c in range(channels) if c not in both]
    notes = [Phrase(N_("r and d pass through stop-gradient nodes: their backward is 0 (held constant), "
                       "as the paper prescribes, so no gradient flows into r_clip, d_clip and what "
                       "computes them from the batch. The numerical checks replay the tape with r and d "
                       "held at their values too: they measure the function the backward differentiates.")),
             Phrase(N_("Clipped here: r in channels {r}, d in channels {d} (of {c})."),
                    r=r_at or Phrase(N_("none")), d=d_at or Phrase(N_("none")), c=channels)]
    forward = tape.numerical_grad(x, dy, h, hold=False)  # the forward's own derivative
    gap = np.abs(forward - x.grad)
    channel_axis = 1
    per_channel = np.moveaxis(gap, channel_axis, 0).reshape(channels, -1).max(axis=1)
    if free:
        notes.append(Phrase(N_("Central differences of the forward itself, r and d recomputed at each "
                               "nudge, differ from the staged dx by up to {gap:.2g} in channels {free}, "
                               "where r or d is not clipped: there they move with the batch, and the "
                               "stop-gradient backward is not the derivative of the forward. (With neither "
                               "clipped, x_hat * r + d = (x - run_mean) / run_std exactly, whose "
                               "derivative is 1 / run_std.)"),
                            gap=float(per_channel[free].max()), free=free))
    if both:
        notes.append(Phrase(N_("In channels {both}, where r and d are both clipped, they do not move "
                               "with x, and the forward's central differences agree with the staged dx "
                               "(largest difference {gap:.1e})."), both=both, gap=float(per_channel[both].max())))
    return notes


def _renorm_properties(tape, axes, over, eps):
    """What the staged gradients satisfy with r and d held: each value should be 0 up to rounding."""
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    dx, x_hat = tape["x"].grad, tape["x_hat"].value
    r, dy, gamma = tape["r"].value, tape.output.grad, tape["gamma"].value
    bn = norms.BatchNorm1d if dx.ndim < 4 else norms.BatchNorm2d
    plain = bn(dx.shape[1], eps=eps)
    plain.weight.data[...] = (gamma * r).ravel()
    plain.forward(tape["x"].value)
    held = np.concatenate([tape[n].grad.ravel() for n in ("r_clip", "d_clip", "run_mean", "run_std")])
    return [(Phrase(N_("{sum}: with r and d held, the output ignores a shift of x"), sum=f"sum_{over}(dx)"),
             worst(dx.sum(axis=axes))),
            (Phrase(N_("{sum}: the output ignores a rescaling of x (up to eps)"), sum=f"sum_{over}(dx * x_hat)"),
             worst(np.sum(dx * x_hat, axis=axes))),
            (Phrase(N_("{diff}: BatchNorm's backward with gamma * r"), diff="dx - BatchNorm(gamma * r).backward(dy)"),
             worst(dx - plain.backward(dy))),
            (Phrase(N_("{d}: nothing passes a stop-gradient"), d="d_r_clip, d_d_clip, d_run_mean, d_run_std"),
             worst(held))]


# --- WeightNorm ------------------------------------------------------------------------------
def weight_norm_tape(v, g, x, b, over_rows):
    """w = g * v / ||v|| row by row (dim=0), then the Linear y = x @ w^T + b (w^T as W)."""
    t = Tape()
    v = t.leaf("v", v, step=N_("parameter"))  # the tape starts at v: its gradient is the point
    g = t.leaf("g", g)
    x = t.leaf("x", x)
    b = t.leaf("b", b)
    v2 = t.square(v, "v2", N_("square"), "q")
    ss = t.sum(v2, (1,), "ss", N_("sum of squares"), "in", "s")
    norm = t.sqrt(ss, "norm", N_("sqrt"), r"\|v\|")
    v_hat = t.div(v, norm, "v_hat", N_("direction"), r"\hat{v}", over_a="in")
    w = t.mul(v_hat, g, "w", N_("length"), "w", over_b="in")
    W = t.transpose(w, (1, 0), "W", N_("transpose"), "W")
    product = t.matmul(x, W, "u", N_("matmul"), "u")
    t.add(product, b, "y", N_("bias"), "y", over_b=over_rows)
    return t


def weight_norm_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None):
    """x of shape (*, D) through WeightNorm(Linear(D, D + 1)) with dim=0, v, g and b drawn from
    ``rng``; the tape starts at v, whose gradient the step-through is about."""
    no_gamma_beta(title, gamma, beta)
    D = x.shape[-1]
    if D < 2:
        raise ValueError(_("the {title} step-through needs D >= 2 input features (with one, v's direction "
                           "is +-1 and its gradient is 0), got shape {shape}").format(title=title, shape=x.shape))
    layer = WeightNorm(Linear(D, D + 1), dim=0)
    randomize_parameters(layer, rng)
    over_rows = ",".join(letters("linear", x.ndim)[:-1])
    tape = weight_norm_tape(layer.weight_v.data, layer.weight_g.data, x, layer.bias.data, over_rows)
    dy = upstream(dy, rng, tape.output.value.shape)

    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {"x": layer.backward(dy), "v": layer.weight_v.grad, "g": layer.weight_g.grad,
                 "b": layer.bias.grad}
    what = Phrase(N_("{layer} with dim=0 (one g per output row), x of shape {shape}"),
                  layer=f"WeightNorm(Linear({D}, {D + 1}))", shape=x.shape)
    notes = [Phrase(N_("v reaches w by two routes: straight (v -> v_hat) and through its norm (v -> v2 -> "
                       "ss -> norm -> v_hat). The straight one brings (g / ||v||) dw back; the one through "
                       "the norm takes away its part along v, so that their sum is the projection "
                       "(g / ||v||) (I - v_hat v_hat^T) dw: dv is orthogonal to v.")),
             Phrase(N_("{w} is the Linear's weight transposed, (in, out): {ours} is its {theirs}."),
                    w="W", ours="x @ W + b", theirs="x @ w^T + b")]
    st = StepThrough(kind, title, tape, dy, 0.0, "in", "WeightNorm.backward", COMPACT[kind], what=what,
                     notes=notes, route_target="w", route_names={"sum of squares": N_("norm")}, inputs=("x",))
    check(st, y_ref, reference, h)
    st.properties = _weight_norm_properties(tape)
    return st


def _weight_norm_properties(tape):
    """dv's projection, measured: each value should be 0 up to rounding."""
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    v, g, w = tape["v"], tape["g"], tape["w"]
    v_hat, norm = tape["v_hat"].value, tape["norm"].value
    dw = w.grad
    along = np.sum(dw * v_hat, axis=1, keepdims=True)
    return [(Phrase(N_("{sum}, per row: dv is orthogonal to v"), sum="sum_in(dv * v)"),
             worst(np.sum(v.grad * v.value, axis=1))),
            (Phrase(N_("{diff}: dw projected off v"), diff="dv - (g / ||v||) (dw - (dw . v_hat) v_hat)"),
             worst(v.grad - g.value / norm * (dw - along * v_hat))),
            (Phrase(N_("{diff}: g's gradient is a dot product"), diff="dg - dw . v_hat"), worst(g.grad - along))]


# --- LayerScale and ReZero -------------------------------------------------------------------
def scaled_branch_tape(x, W, b, s, scale_name, scale_tex, over_rows, over_scale):
    """y = x + s * f with the branch f = x @ W + b (a Linear) and the scale s (per channel, or
    one number for every element)."""
    t = Tape()
    x = t.leaf("x", x)
    W, b, s = t.leaf("W", W), t.leaf("b", b), t.leaf(scale_name, s, scale_tex)
    u = t.matmul(x, W, "u", N_("matmul"), "u")
    f = t.add(u, b, "f", N_("bias"), "f", over_b=over_rows)
    h = t.mul(f, s, "h", N_("scale"), "h", over_b=over_scale)
    t.add(x, h, "y", N_("residual add"), "y")
    return t


def scaled_branch_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None):
    """x of shape (*, D) through y = x + s * Linear(D, D)(x), the Linear drawn from ``rng``, s
    LayerScale's gamma at its init 1e-5 or ReZero's alpha at 0 (a given ``gamma`` sets it)."""
    if beta is not None:
        raise ValueError(_("the {title} step-through has no beta; leave it out").format(title=title))
    D = x.shape[-1]
    linear = randomize_parameters(Linear(D, D), rng)
    scale = LayerScale(D) if kind == "layer_scale" else ReZero()
    if gamma is not None:
        scale.scale.data[...] = np.asarray(gamma, dtype=np.float64).reshape(scale.scale.shape)
    name, tex = ("gamma", r"\gamma") if kind == "layer_scale" else ("alpha", r"\alpha")
    axis_letters = letters("linear", x.ndim)
    over_rows = ",".join(axis_letters[:-1])
    over_scale = over_rows if kind == "layer_scale" else ",".join(axis_letters)
    tape = scaled_branch_tape(x, linear.weight.data.T, linear.bias.data, scale.scale.data, name, tex,
                              over_rows, over_scale)
    dy = upstream(dy, rng, x.shape)

    # the reference: the two layers' own forward and backward, composed as a residual block does
    for layer in (linear, scale):
        layer.zero_grad()
    y_ref = x + scale.forward(linear.forward(x))
    reference = {"x": dy + linear.backward(scale.backward(dy)), "W": linear.weight.grad.T,
                 "b": linear.bias.grad, name: scale.scale.grad}
    what = Phrase(N_("y = x + {s} * f, the branch f = x @ W + b a Linear({d}, {d}), {s} = {value}"),
                  s=name, d=D, value="[" + ", ".join(f"{v:.3g}" for v in scale.scale.data) + "]")
    st = StepThrough(kind, title, tape, dy, 0.0, over_rows, f"{type(scale).__name__}.backward",
                     COMPACT[kind], what=what, route_names={"matmul": N_("residual branch")})
    check(st, y_ref, reference, h)
    st.notes = _scale_notes(tape, name)
    st.properties = _scale_properties(tape, name, tuple(range(x.ndim - 1 if kind == "layer_scale" else x.ndim)))
    return st


def _scale_notes(tape, name):
    """The gradient that reaches the branch against the one that reaches the scale, measured."""
    branch = float(np.max(np.abs(tape["W"].grad)))
    scale = float(np.max(np.abs(tape[name].grad)))
    return [Phrase(N_("The branch's weight gets max |dW| = {w:.3g}, the scale max |d{s}| = {g:.3g}: at "
                      "the start the scale moves and the branch barely does (not at all at 0), until "
                      "the scale lets the gradient in."), w=branch, s=name, g=scale)]


def _scale_properties(tape, name, axes):
    """What the staged gradients satisfy, measured: each value should be 0 up to rounding."""
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    s, f, dy = tape[name].value, tape["f"].value, tape.output.grad
    return [(Phrase(N_("{diff}: the branch receives dy scaled by {s}"), diff=f"d_f - {name} * dy", s=name),
             worst(tape["f"].grad - s * dy)),
            (Phrase(N_("{diff}: the scale's gradient is the branch's output against dy"),
                    diff=f"d{name} - sum(dy * f)"), worst(tape[name].grad - np.sum(dy * f, axis=axes)))]


register("batch_renorm", "Batch Renorm", (2, 3, 4), batch_renorm_step_through,
         description=N_("BatchNorm corrected by r and d behind a stop-gradient"))
register("weight_norm", "WeightNorm", (2, 3, 4), weight_norm_step_through,
         description=N_("w = g * v / ||v|| per row, then the Linear; dv orthogonal to v"))
register("layer_scale", "LayerScale", (2, 3, 4), scaled_branch_step_through,
         description=N_("y = x + gamma * Linear(x), gamma per channel, starting at 1e-5"))
register("rezero", "ReZero", (2, 3, 4), scaled_branch_step_through,
         description=N_("y = x + alpha * Linear(x), one alpha, starting at 0"))
