"""Mistakes in folding an evaluation-mode BatchNorm into the Linear before it."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
FOLD_SCALE = Anchor("scale", "gamma / np.sqrt(running_var + eps)")
FOLD_WEIGHT = Anchor("weight", "s[:, None] * W")
FOLD_BIAS = Anchor("bias", "s * (b - running_mean) + beta")

MISTAKES = [
    Mistake(
        "fold-bias-not-centred",
        N_("the folded bias not shifted by the running mean"),
        N_("W' is right and so is every output's scale, but b' is off by s * running_mean: "
           "b' = s * b + beta, as if BatchNorm only scaled and shifted, so every output is off by "
           "a constant per feature, large when the running mean is"),
        N_("Evaluation subtracts running_mean before it scales: bn(z) = s * (z - running_mean) + "
           "beta, and z = x @ W.T + b, so b' = s * (b - running_mean) + beta."),
        {"fold_batchnorm": [((FOLD_BIAS, "s * b + beta"),)]},
        taught=solution("fold_batchnorm"),
    ),
    Mistake(
        "fold-scale-on-columns",
        N_("the fold's scale applied to the columns of W instead of its rows"),
        N_("b' is right, W' is not: W * s scales column i (input feature i) by s_i where row j "
           "(output feature j) should be scaled by s_j; it runs only because W is square, and "
           "raises a shape error otherwise"),
        N_("s has one value per OUTPUT feature, and W is (out, in): output j is row j of W, so "
           "W' = s[:, None] * W (or np.diag(s) @ W), not W * s."),
        {"fold_batchnorm": [((FOLD_WEIGHT, "W * s[None, :]"),)]},
        taught=solution("fold_batchnorm"),
    ),
    Mistake(
        "fold-beta-missing",
        N_("the fold forgets beta"),
        N_("W' is right, b' is off by beta: b' = s * (b - running_mean), the BatchNorm's shift "
           "left out of the folded layer"),
        N_("BatchNorm adds beta after the scale, and a constant added to every output goes into "
           "the bias: b' = s * (b - running_mean) + beta."),
        {"fold_batchnorm": [((FOLD_BIAS, "s * (b - running_mean)"),)]},
        taught=solution("fold_batchnorm"),
    ),
    Mistake(
        "fold-bias-dropped",
        N_("the fold drops the Linear's own bias"),
        N_("W' is right, b' is off by s * b: b' = beta - s * running_mean, as if the Linear had "
           "no bias; a Linear without bias (b = 0) hides it"),
        N_("The Linear's bias goes through the BatchNorm like the rest of z: it is shifted by the "
           "running mean and scaled, b' = s * (b - running_mean) + beta."),
        {"fold_batchnorm": [((FOLD_BIAS, "beta - s * running_mean"),)]},
        taught=solution("fold_batchnorm"),
    ),
    Mistake(
        "fold-eps-missing",
        N_("the fold forgets eps"),
        N_("right while running_var is large against eps, wrong where it is not: s = gamma / "
           "sqrt(running_var) without the BatchNorm's eps, so W' and b' are too large for "
           "channels whose running variance is near eps (and infinite for a zero one)"),
        N_("The folded layer must equal the BatchNorm in evaluation, eps included: "
           "s = gamma / sqrt(running_var + eps)."),
        {"fold_batchnorm": [((FOLD_SCALE, "gamma / np.sqrt(running_var)"),)]},
        taught=solution("fold_batchnorm"),
    ),
    Mistake(
        "fold-bias-not-scaled",
        N_("the folded bias not multiplied by the scale"),
        N_("W' is right, b' is not: b' = b - running_mean + beta, the centred bias left unscaled, "
           "where the BatchNorm multiplies everything it normalises, the bias included, by s"),
        N_("bn(z) = s * (z - running_mean) + beta with z = x @ W.T + b: s multiplies b and the "
           "running mean along with x @ W.T, so b' = s * (b - running_mean) + beta."),
        {"fold_batchnorm": [((FOLD_BIAS, "b - running_mean + beta"),)]},
        taught=solution("fold_batchnorm"),
    ),
]
