"""Mistakes in Batch Renormalization (BatchNorm with r and d held constant in the backward)."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answer that the mutants replace (see base.Anchor).
BR_R = Anchor("r", "np.clip(sigma_B / sigma, 1 / self.r_max, self.r_max)")
BR_R_RATIO = Anchor("r", "sigma_B / sigma,")
BR_D = Anchor("d", "np.clip((mean - running_mean) / sigma, -self.d_max, self.d_max)")
BR_D_SIGMA = Anchor("d", "(mean - running_mean) / sigma,")
BR_DX_HAT = Anchor("dx-hat", "dy * self.gamma.data.reshape(view) * r")
BR_DGAMMA = Anchor("dgamma", "(dy * (x_hat * r + d))")
BR_DX = Anchor("dx", "dx = (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat) / sigma_B")
BR_NEW_MEAN = Anchor("running-mean", "m * mean.ravel()")
BR_NEW_VAR = Anchor("running-var", "m * var.ravel()")
BR_EVAL = Anchor("eval", "if not self.training:")  # BatchNorm's running-statistics mistakes: catalog/norms.py
# the derivative through r and d where they are not clipped (clip passes the gradient inside
# its bounds and stops it outside): with g = dy * gamma, r's path adds x_hat * mean_B(g * x_hat)
# / sigma and d's adds mean_B(g) / sigma; dx_hat = g * r, so g = dx_hat / r
R_FREE = "(np.abs(np.log(r)) < np.log(self.r_max))"
D_FREE = "(np.abs(d) < self.d_max)"
THROUGH_R_AND_D = (f" + (x_hat * mean_dx_hat_x_hat * {R_FREE} + mean_dx_hat * {D_FREE})"
                   " / (r * sigma)")

MISTAKES = [
    Mistake(
        "brn-r-d-differentiated",
        N_("Batch Renorm's backward differentiates through r and d"),
        N_("the forward, the running statistics, dgamma and dbeta are right; dx is not in the "
           "channels where r or d is inside its bounds: there r = sigma_B / sigma and d = (mean - "
           "running_mean) / sigma were treated as functions of x, so the output is (x - "
           "running_mean) / sigma and dx = dy * gamma / sigma, the batch's statistics gone from "
           "the gradient (what autograd gives without a stop-gradient on r and d)"),
        N_("r and d are constants in the backward (the paper's stop-gradient): dx is "
           "BatchNorm's backward with dx_hat = dy * gamma * r, so the gradient still goes through "
           "the batch's mean and variance, as in BatchNorm, scaled by r."),
        {"batch_renorm": [((BR_DX, BR_DX + THROUGH_R_AND_D),),
                          ((BR_DX, "dx = dy * self.gamma.data.reshape(view) / sigma"),)]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-dx-without-r",
        N_("Batch Renorm's dx without the factor r"),
        N_("the forward, the running statistics, dgamma and dbeta are right; dx is BatchNorm's "
           "backward of dy * gamma, off by the factor r in each channel where r is not 1: the "
           "constant r that multiplies x_hat in the forward was left out of the backward"),
        N_("y = gamma * (x_hat * r + d) + beta with r a constant, so the gradient reaching x_hat "
           "is dy * gamma * r; the rest is BatchNorm's backward."),
        {"batch_renorm": [((BR_DX_HAT, "dy * self.gamma.data.reshape(view)"),)]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-dgamma-from-x-hat",
        N_("Batch Renorm's dgamma computed with x_hat instead of x_hat * r + d"),
        N_("everything is right but dgamma in training: it sums dy * x_hat, BatchNorm's, where "
           "gamma multiplies the corrected x_hat * r + d"),
        N_("gamma multiplies x_hat * r + d, so dgamma = sum_B(dy * (x_hat * r + d)); in "
           "evaluation r = 1 and d = 0 and it is BatchNorm's."),
        {"batch_renorm": [((BR_DGAMMA, "(dy * x_hat)"),)]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-no-clip",
        N_("Batch Renorm's r and d not clipped"),
        N_("right while r stays within [1 / r_max, r_max] and d within [-d_max, d_max]; in a "
           "channel where one leaves its bounds the forward is off, and with it every gradient: "
           "unclipped, the output is (x - running_mean) / sigma, normalised by the running "
           "statistics alone however far they are from the batch's"),
        N_("r = clip(sigma_B / sigma, 1 / r_max, r_max) and d = clip((mean - running_mean) / "
           "sigma, -d_max, d_max): the clip bounds how far the batch's statistics are corrected, "
           "so early running statistics cannot take over."),
        {"batch_renorm": [((BR_R, "sigma_B / sigma"), (BR_D, "(mean - running_mean) / sigma")),
                          ((BR_R, "sigma_B / sigma"),),
                          ((BR_D, "(mean - running_mean) / sigma"),)]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-running-corrected",
        N_("Batch Renorm's running statistics updated with the corrected statistics"),
        N_("the first forward and its gradients are right; the running statistics are not: they "
           "were averaged with the mean and variance the output was normalised with, mean - d * "
           "sigma_B / r and (sigma_B / r)**2, which are (nearly) the running statistics "
           "themselves where r and d are not clipped, so there they (nearly) stay where they are"),
        N_("The running statistics estimate the data's statistics: average the batch's own mean "
           "and unbiased variance into them, as BatchNorm does; r and d only correct the output."),
        {"batch_renorm": [
            ((BR_NEW_MEAN, "m * (mean - d * sigma_B / r).ravel()"),
             (BR_NEW_VAR, "m * ((sigma_B / r) ** 2 - self.eps).ravel()")),
            ((BR_NEW_MEAN, "m * (mean - d * sigma_B / r).ravel()"),
             (BR_NEW_VAR, "m * (var / r ** 2).ravel()")),
        ]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-r-inverted",
        N_("Batch Renorm's r inverted"),
        N_("every number is off, the forward first: r = sigma / sigma_B, the running standard "
           "deviation over the batch's, where r = sigma_B / sigma; the output is then no longer "
           "(x - running_mean) / sigma when nothing is clipped"),
        N_("r corrects the batch's scale to the running one: x_hat * r = (x - mean) / sigma_B * "
           "sigma_B / sigma = (x - mean) / sigma, so r = sigma_B / sigma."),
        {"batch_renorm": [((BR_R_RATIO, "sigma / sigma_B,"),)]},
        taught=solution("batch_renorm"),
    ),
    Mistake(
        "brn-d-over-batch-std",
        N_("Batch Renorm's d divided by the batch's standard deviation"),
        N_("every number is off, the forward first, where d is not clipped: d = (mean - "
           "running_mean) / sigma_B, where the running sigma divides it"),
        N_("d shifts x_hat * r, which is in units of the running sigma: x_hat * r + d = (x - "
           "running_mean) / sigma needs d = (mean - running_mean) / sigma."),
        {"batch_renorm": [((BR_D_SIGMA, "(mean - running_mean) / sigma_B,"),)]},
        taught=solution("batch_renorm"),
    ),
]
