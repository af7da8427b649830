"""The residual sub-layer step by step: where the identity path's gradient enters.

One sub-layer of a Transformer block, x -> y, with its LayerNorm where ``position`` puts it
(the positions of ``normcore.nn.TransformerBlock``)::

    "pre"       y = x + f(LN(x))            dx = dy + LN'(f'(dy))
    "post"      y = LN(x + f(x))            dz = LN'(dy);  dx = dz + f'(dz)
    "deepnorm"  y = LN(alpha * x + f(x))    dz = LN'(dy);  dx = alpha * dz + f'(dz)
    "peri"      y = x + LN_f(f(LN(x)))      dx = dy + LN'(f'(LN_f'(dy)))
    "reordered" y = x + LN_f(f(x))          dx = dy + f'(LN_f'(dy))
    "none"      y = x + f(x)                dx = dy + f'(dy)

and "pre" with LayerNorm Scaling (``layer_index=l``: the block's ``norm_scale="depth"``),
y = x + f(LN(x) / sqrt(l)), dx = dy + LN'(f'(dy) / sqrt(l)).

where G'(g) is G's backward applied to g. The sub-layer f is one Linear, f(h) = h @ W + b, so
that the tape stays short and every node of it is a step a student already knows: LayerNorm's
nodes (the same builders as ``step_through("layernorm")``), a matrix product, a bias, the
residual add. x feeds the residual add directly (the identity path) and the branch through
f; its gradient is the sum of the two shares. In Pre-Norm the identity share is dy itself; in
Post-Norm and DeepNorm it is dz, dy after LayerNorm's backward: the norm's Jacobian sits on
the identity path.

The reference is normcore's own residual wrapping: ``ResidualSublayers`` with a Linear as its
one sub-layer, whose forward and backward are the block's ``_residual`` and
``_residual_backward``; the tape takes that module's parameters.

    st = step_through("residual", shape=(3, 4), position="post")
    st.tape["z"].share("x")        # what the identity path hands to x: dz, not dy
"""

import numpy as np

from ..i18n import N_, translator
from ..layer_cases import randomize_parameters
from ..nn import Dropout, Linear
from ..nn.transformer import ResidualSublayers
from .core import StepThrough, affine, check, input_upstream, standardize
from .registry import register
from .tape import Phrase, Tape

_ = translator("explain")

DEEPNORM_BLOCKS = 8  # the stack DeepNorm's alpha is taken for: alpha = (2 * 8)**(1/4) = 2

# position: (title, the forward, where the identity path's gradient enters)
POSITIONS = {
    "pre": ("Pre-Norm", "y = x + f(LN(x))",
            N_("The identity path: y = x + f, so y hands x the share dy itself, untouched. "
               "LayerNorm's Jacobian sits on the branch only: dx = dy + the share through LN "
               "and f.")),
    "post": ("Post-Norm", "y = LN(z), z = x + f(x)",
             N_("The identity path runs through the norm: y = LN(z) with z = x + f, so z hands "
                "x the share dz, dy after LayerNorm's backward, never dy itself: dx = dz + the "
                "share through f.")),
    "deepnorm": ("DeepNorm", "y = LN(z), z = alpha * x + f(x)",
                 N_("The identity path runs through the norm and alpha: z hands ax the share "
                    "dz, dy after LayerNorm's backward, and ax hands x alpha * dz: dx = "
                    "alpha * dz + the share through f.")),
    "peri": ("Peri-LN", "y = x + LN_f(f(LN(x)))",
             N_("The identity path: y = x + o, so y hands x the share dy itself, untouched, as "
                "in Pre-Norm. The branch is normalised twice, on its way in (LN) and on its way "
                "out (LN_f, with gamma_f and beta_f): dx = dy + the share through LN, f and "
                "LN_f.")),
    "reordered": (N_("reordered-norm"), "y = x + LN_f(f(x))",
                  N_("The identity path: y = x + o, so y hands x the share dy itself, untouched, as "
                     "in Pre-Norm. The branch is normalised on its way out only (LN_f, with gamma_f "
                     "and beta_f; OLMo 2's reordered norm): dx = dy + the share through LN_f and "
                     "f.")),
    "none": (N_("no-norm"), "y = x + f(x)",
             N_("The identity path: y = x + f, so y hands x the share dy itself; with no norm "
                "anywhere, dx = dy + the share through f.")),
}


# the compact backward, one formula per norm position, G'(g) = G's backward of g, f'(g) = g @ W.T
COMPACT = {
    "pre": Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + LN'(f'(dy))"),
    "post": Phrase(N_("{dx}: the identity path carries dz, not dy"),
                   dx="dz = LN'(dy); dx = dz + f'(dz)"),
    "deepnorm": "dz = LN'(dy); dx = alpha * dz + f'(dz)",
    "peri": Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + LN'(f'(LN_f'(dy)))"),
    "reordered": Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + f'(LN_f'(dy))"),
    "none": "dx = dy + f'(dy)",
}


def _letters(ndim):
    return {2: ("T", "D"), 3: ("B", "T", "D")}[ndim]


class ResidualSublayer(ResidualSublayers):
    """One residual sub-layer as ``TransformerBlock`` builds and runs it, with a Linear(D, D)
    as the sub-layer f (``self.f``), its norm(s) at ``position``, LayerNorm Scaling at depth
    ``layer_index`` (None: none) and no dropout (p = 0)."""

    def __init__(self, d_model, position, rng=None, layer_index=None):
        self._dtype = np.float64
        n_layers = DEEPNORM_BLOCKS if position == "deepnorm" else None
        self._setup("ResidualSublayer", d_model, None, "layernorm", "reference", position, 0.0, n_layers,
                    True, None, sublayers=2, norm_scale=None if layer_index is None else "depth",
                    layer_index=layer_index)
        self._add_sublayer(1, "f", Linear(d_model, d_model, gain=self._beta, rng=rng))
        self.drop = Dropout(0.0)

    def forward(self, x):
        norm, out_norm = self._norms_of(1)
        return self._residual(x, self.f, norm, self.drop, out_norm)

    def backward(self, dy):
        norm, out_norm = self._norms_of(1)
        return self._residual_backward(dy, self.f.backward, norm, self.drop, out_norm)


# the tape's leaf for each parameter of ResidualSublayer, and how its value is laid out there
LEAVES = {"norm1.weight": ("gamma", r"\gamma"), "norm1.bias": ("beta", r"\beta"),
          "f.weight": ("W", "W"), "f.bias": ("b", "b"),
          "norm1_out.weight": ("gamma_f", r"\gamma_f"), "norm1_out.bias": ("beta_f", r"\beta_f")}


def _on_tape(name, value):
    """A parameter's value as the tape holds it: the Linear's weight (out, in) transposed to W
    (in, out), so that f(h) = h @ W + b; the others as they are."""
    return value.T if name == "f.weight" else value


def residual_tape(x, params, position, alpha, eps, over_params, layer_index=None):
    """The tape of one residual sub-layer: ``params`` maps ResidualSublayer's parameter names to
    their values; LayerNorm's nodes come from ``_standardize`` and ``_affine``; with
    ``layer_index`` l (Pre-Norm only) the norm's output is scaled by 1 / sqrt(l)."""
    t = Tape()
    x = t.leaf("x", x)
    p = {LEAVES[name][0]: t.leaf(LEAVES[name][0], _on_tape(name, value), LEAVES[name][1])
         for name, value in params.items()}
    d = x.value.ndim - 1

    def norm(v, of, out, gamma, beta):  # LayerNorm's nodes of v, marked with ``of`` (see _named)
        hat = of or "x"
        v_hat = standardize(t, v, eps, (d,), "D", f"{hat}_hat", rf"\hat{{{hat}}}", of)
        return affine(t, v_hat, gamma, beta, over_params, of, out)

    def f(h):
        u = t.matmul(h, p["W"], "u", N_("matmul"), "u")
        return t.add(u, p["b"], "f", N_("bias"), "f", over_b=over_params)

    if position in ("post", "deepnorm"):
        carry = x if position == "post" else t.scale(x, alpha, "alpha", "ax", N_("scale by alpha"), "a", r"\alpha")
        z = t.add(carry, f(x), "z", N_("residual add"), "z")
        norm(z, "z", ("y", "y"), p["gamma"], p["beta"])
        return t
    h = x if position in ("none", "reordered") else norm(x, "", ("h", "h"), p["gamma"], p["beta"])
    if layer_index is not None:
        h = t.scale(h, 1.0 / np.sqrt(layer_index), "1/sqrt(l)", "hs", N_("scale by 1/sqrt(l)"), "h_s",
                    r"\tfrac{1}{\sqrt{l}}")
    branch = f(h)
    if position in ("peri", "reordered"):
        branch = norm(branch, "f", ("o", "o"), p["gamma_f"], p["beta_f"])
    t.add(x, branch, "y", N_("residual add"), "y")
    return t


def residual_step_through(kind, title, x, rng, *, dy, h, gamma=None, beta=None, position=None,
                          layer_index=None):
    """The residual sub-layer's ``StepThrough`` for ``step_through("residual", ...)``: x of shape
    (T, D) or (B, T, D), every parameter random from ``rng``, checked against
    ``ResidualSublayer``'s forward and backward (normcore's ``_residual`` and
    ``_residual_backward``); ``layer_index`` l >= 1 adds LayerNorm Scaling to Pre-Norm."""
    if gamma is not None or beta is not None:
        raise ValueError(_("the residual step-through draws every parameter from the seed; it "
                           "takes no gamma or beta"))
    position = "pre" if position is None else position
    if position not in POSITIONS:
        raise ValueError(_("position must be one of {choices}, got {position!r}").format(
            choices=", ".join(POSITIONS), position=position))
    if layer_index is not None and position != "pre":
        raise ValueError(_("layer_index is LayerNorm Scaling's depth l, which scales the norm of a "
                           "Pre-Norm sub-layer; it needs position pre, got {position}").format(position=position))
    heading, forward, identity = POSITIONS[position]
    if layer_index is not None:
        heading, forward = N_("Pre-Norm, LayerNorm Scaling"), "y = x + f(LN(x) / sqrt(l))"
    letters = _letters(x.ndim)
    over_params = ",".join(letters[:-1])
    layer = randomize_parameters(ResidualSublayer(x.shape[-1], position, rng, layer_index), rng)
    dy = input_upstream(dy, rng, x.shape)
    params = {name: p.data for name, p in layer.named_parameters()}
    norm = getattr(layer, "norm1", getattr(layer, "norm1_out", None))  # norm1, or reordered's norm1_out
    eps = 0.0 if norm is None else norm.eps
    tape = residual_tape(x, params, position, layer.alpha, eps, over_params, layer.layer_index)

    layer.zero_grad()
    y_ref = layer.forward(x)
    reference = {"x": layer.backward(dy)}
    reference.update({LEAVES[name][0]: _on_tape(name, p.grad) for name, p in layer.named_parameters()})
    # the sentences are Phrases: said in the language in use where they are shown
    what = Phrase(N_("{forward} with f(h) = h @ W + b (a Linear), no norm") if position == "none" else
                  N_("{forward} with f(h) = h @ W + b (a Linear), LN a LayerNorm over D"), forward=forward)
    notes = [Phrase(N_("W is the Linear's weight transposed, (in, out): h @ W + b is its h @ weight.T + bias."))]
    if position == "deepnorm":
        notes.append(Phrase(N_("alpha = (2N)**(1/4) = {alpha:g} for a stack of N = {n} blocks "
                               "(deepnorm_constants)."), alpha=layer.alpha, n=DEEPNORM_BLOCKS))
    compact = COMPACT[position]
    if layer_index is not None:
        notes.append(Phrase(N_("LayerNorm Scaling: block l = {l} of a stack scales its norm's output by "
                               "1/sqrt(l) = {s:.4g}, and so the gradient into the norm's backward."),
                            l=layer.layer_index, s=layer.depth_scale))
        compact = Phrase(N_("{dx}: dy reaches x untouched"), dx="dx = dy + LN'(f'(dy) / sqrt(l))")
    notes.append(Phrase(identity))
    st = StepThrough("residual", Phrase(N_("{title} residual"), title=Phrase(heading)), tape, dy, eps, "D",
                     "ResidualSublayers._residual_backward", compact, what=what,
                     notes=notes, route_target="y", route_names=_route_names(position))
    check(st, y_ref, reference, h)
    st.properties = residual_properties(tape, position)
    if position in ("post", "deepnorm"):  # the measured difference the identity note speaks of
        st.notes.append(Phrase(N_("Here the identity share differs from dy by up to {diff:.3g}."),
                               diff=float(np.max(np.abs(identity_share(tape, position) - dy)))))
    return st


def _route_names(position):
    """The graph's names of the routes off the identity path: the route through the sub-layer
    f, which in Pre-Norm and Peri-LN also runs through the norm(s) (the mean is its first
    reduction). Marked here, translated where the graph says them."""
    if position == "pre":
        return {"mean": N_("LayerNorm and f")}
    if position == "peri":
        return {"mean": N_("LayerNorm, f and LN_f")}
    if position == "reordered":
        return {"matmul": N_("f and LN_f")}
    return {"matmul": N_("sub-layer f")}


def identity_share(tape, position):
    """The share of dL/dx that comes along the identity path (the residual add's, through
    DeepNorm's alpha)."""
    if position == "deepnorm":
        return tape["ax"].share("x")
    return tape["z" if position == "post" else "y"].share("x")


def residual_properties(tape, position):
    """What the gradients must satisfy, measured: each value should be 0 up to rounding."""
    ident = identity_share(tape, position)
    dx, dy = tape["x"].grad, tape.output.grad
    worst = lambda a: float(np.max(np.abs(a)))  # noqa: E731
    if position in ("post", "deepnorm"):
        return [(Phrase(N_("sum_D(identity share): LN's backward takes out the mean of dy, so even the "
                           "identity path's share sums to 0 over D")), worst(ident.sum(axis=-1)))]
    props = [(Phrase(N_("identity share - dy: the identity path hands dy to x untouched")), worst(ident - dy))]
    if position not in ("none", "reordered"):  # reordered: the rest comes through f last, not LN
        props.append((Phrase(N_("sum_D(dx - dy): the rest of dx comes through LN's backward, which sums "
                                "to 0 over D")), worst((dx - dy).sum(axis=-1))))
    return props


register("residual", N_("residual block"), (2, 3), residual_step_through, options=("position", "layer_index"),
         description=N_("one residual sub-layer, its LayerNorm where --position puts it"))
