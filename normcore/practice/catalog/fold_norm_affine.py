"""Mistakes in folding a norm's gamma and beta into the Linear after it."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answer that the mutants replace (see base.Anchor).
AFFINE_WEIGHT = Anchor("weight", "W @ np.diag(gamma)")
AFFINE_BIAS = Anchor("bias", "W @ beta + b")

MISTAKES = [
    Mistake(
        "fold-affine-gamma-on-rows",
        N_("gamma applied to the rows of W instead of its columns"),
        N_("b' is right, W' is not: gamma[:, None] * W scales row j (output feature j) by "
           "gamma_j where column i (input feature i, the norm's feature i) should be scaled by "
           "gamma_i; it runs only because W is square, and raises a shape error otherwise"),
        N_("gamma has one value per feature of the norm, which are the Linear's INPUT features, "
           "and W is (out, in): input i is column i of W, so W' = W * gamma[None, :] (or "
           "W @ np.diag(gamma)). BatchNorm folded into the Linear before it scales rows."),
        {"fold_norm_affine": [((AFFINE_WEIGHT, "np.diag(gamma) @ W"),)]},
        taught=solution("fold_norm_affine"),
    ),
    Mistake(
        "fold-affine-beta-not-through-w",
        N_("beta added to the bias without going through W"),
        N_("W' is right, b' is off: b' = b + beta, as if beta were added after the Linear; it "
           "runs only because W is square, and raises a shape error otherwise"),
        N_("beta is added to the norm's output, before the Linear, so the Linear maps it like "
           "any other input: b' = W @ beta + b."),
        {"fold_norm_affine": [((AFFINE_BIAS, "beta + b"),)]},
        taught=solution("fold_norm_affine"),
    ),
    Mistake(
        "fold-affine-beta-through-w-transposed",
        N_("beta multiplied by W transposed"),
        N_("W' is right, b' is off: b' = W.T @ beta + b (or beta @ W + b), which gives output j "
           "column j of W where it needs row j; it runs only because W is square"),
        N_("The Linear computes h @ W.T + b, so beta (a row of h) gives beta @ W.T = W @ beta: "
           "b' = W @ beta + b."),
        {"fold_norm_affine": [((AFFINE_BIAS, "W.T @ beta + b"),)]},
        taught=solution("fold_norm_affine"),
    ),
    Mistake(
        "fold-affine-bias-dropped",
        N_("the fold drops the Linear's own bias"),
        N_("W' is right, b' is off by b: b' = W @ beta, as if the Linear had no bias; a Linear "
           "without bias (b = 0) hides it"),
        N_("The Linear still adds its bias after the product: b' = W @ beta + b."),
        {"fold_norm_affine": [((AFFINE_BIAS, "W @ beta"),)]},
        taught=solution("fold_norm_affine"),
    ),
    Mistake(
        "fold-affine-beta-missing",
        N_("the fold forgets beta"),
        N_("W' is right, b' is off by W @ beta: b' = b, the norm's shift left out of the folded "
           "layer; an RMSNorm (beta = 0) hides it"),
        N_("The norm adds beta to every sample, and the Linear maps that constant into a "
           "constant on its outputs: b' = W @ beta + b."),
        {"fold_norm_affine": [((AFFINE_BIAS, "b"),)]},
        taught=solution("fold_norm_affine"),
    ),
    Mistake(
        "fold-affine-gamma-on-beta",
        N_("gamma applied to beta too"),
        N_("W' is right, b' is off: b' = W' @ beta + b, the folded W (already scaled by gamma) "
           "used for beta, as if the norm computed gamma * (x_hat + beta)"),
        N_("The norm computes gamma * x_hat + beta: beta is added after gamma's scale, so it "
           "meets the original W, b' = W @ beta + b."),
        {"fold_norm_affine": [((AFFINE_BIAS, "W @ np.diag(gamma) @ beta + b"),)]},
        taught=solution("fold_norm_affine"),
    ),
]
