"""Mistakes in weight normalization of a Linear (w = g * v / ||v||)."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answer that the mutants replace (see base.Anchor).
WN_NORM = Anchor("norm", "(v ** 2).sum(axis=1, keepdims=True)")
WN_DG = Anchor("dg", "(dw * v_hat).sum(axis=1, keepdims=True)")
WN_ADD_DG = Anchor("add-dg", "self.weight_g.grad += dg")
WN_DV_SCALE = Anchor("dv", "g / norm * ")
WN_DV_PROJECTION = Anchor("dv", "(dw - dg * v_hat)")
WN_DX = Anchor("dx", "dy @ w")

MISTAKES = [
    Mistake(
        "wn-dv-no-projection",
        N_("WeightNorm's dv without the projection term"),
        N_("the forward, dx, dweight_g and dbias are right, dweight_v is not: dv = (g / ||v||) dw, "
           "the chain rule through v / ||v|| stopped at the division, as if ||v|| were a "
           "constant; each row of dv then has a part along v, which the right dv never has"),
        N_("||v|| depends on v too: dv = (g / ||v||) (dw - (dw . v_hat) v_hat), dw with its part "
           "along v removed; row by row, sum(dv * v) = 0."),
        {"weight_norm": [((WN_DV_PROJECTION, "dw"),)]},
        taught=solution("weight_norm"),
    ),
    Mistake(
        "wn-dg-not-dot-product",
        N_("WeightNorm's dg not the dot product of dw with v / ||v||"),
        N_("the forward, dx and dbias are right, dweight_g is not (and dweight_v too where it was "
           "built from that dg): each g got the plain sum of its row of dw, or the dot product "
           "dw . v without the division by ||v||"),
        N_("w = g * v_hat, so dw/dg is v_hat for its row: dg = sum over the row of dw * v_hat = "
           "(dw . v) / ||v||, one dot product per output row, shape (out, 1)."),
        {"weight_norm": [
            ((WN_ADD_DG, "self.weight_g.grad += dw.sum(axis=1, keepdims=True)"),),
            ((WN_DG, "dw.sum(axis=1, keepdims=True)"),),
            ((WN_ADD_DG, "self.weight_g.grad += (dw * self.weight_v.data).sum(axis=1, keepdims=True)"),),
        ]},
        taught=solution("weight_norm"),
    ),
    Mistake(
        "wn-norm-wrong-axis",
        N_("WeightNorm's norm taken over the wrong axis"),
        N_("every number is off, the forward first: ||v|| was taken down each column (axis 0, "
           "one norm per input feature) or over the whole matrix, where dim=0 takes one norm per "
           "output row, along axis 1 of v (out, in)"),
        N_("dim=0 keeps axis 0, the output rows: norm = sqrt(sum(v**2, axis=1, keepdims=True)), "
           "shape (out, 1) like g, so that each row of w has length |g| of its row."),
        {"weight_norm": [((WN_NORM, "(v ** 2).sum(axis=0, keepdims=True)"),),
                         ((WN_NORM, "(v ** 2).sum()"),)]},
        taught=solution("weight_norm"),
    ),
    Mistake(
        "wn-dv-scale",
        N_("WeightNorm's dv without its factor g / ||v||"),
        N_("the forward, dx, dweight_g and dbias are right; each row of dweight_v is off by a "
           "factor: the factor g / ||v|| in front of the projection was left out, or only g, or "
           "only 1 / ||v||"),
        N_("w = g * v / ||v||: the gradient reaching v goes through the factor g / ||v|| as well "
           "as through the projection, dv = (g / ||v||) (dw - (dw . v_hat) v_hat)."),
        {"weight_norm": [((WN_DV_SCALE, ""),),
                         ((WN_DV_SCALE, "1.0 / norm * "),),
                         ((WN_DV_SCALE, "g * "),)]},
        taught=solution("weight_norm"),
    ),
    Mistake(
        "wn-dx-through-v",
        N_("WeightNorm's dx computed with v instead of w"),
        N_("the forward and every parameter gradient are right, dx is not: it was sent back "
           "through v (or v / ||v||), the parameter, instead of through w = g * v / ||v||, the "
           "weight the forward used"),
        N_("The Linear's forward used w, so its backward does too: dx = dy @ w with w = g * v / "
           "||v||, computed in the forward and kept."),
        {"weight_norm": [((WN_DX, "dy @ (w / g)"),), ((WN_DX, "dy @ (w / g * norm)"),)]},
        taught=solution("weight_norm"),
    ),
]
