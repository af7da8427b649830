"""DyT (Dynamic Tanh) mistakes."""

from dataclasses import replace

from ...i18n import N_
from ..constants import POSITIVE, Constant, WithConstant
from .base import Anchor, Mistake, explain


# The pieces of the reference answers that the mutants replace (see base.Anchor).
DYT_ALPHA = Anchor("alpha", "np.full(1, alpha_init, dtype)")
DYT_U = Anchor("u", "u = self.alpha.data * x")
DYT_SCALE = Anchor("scale", "y = y * self.gamma.data")
DYT_DBETA = Anchor("dbeta", "self.beta.grad += dy.sum(axis=lead)")
DYT_DGAMMA = Anchor("dgamma", "self.gamma.grad += (dy * t).sum(axis=lead)")
DYT_DGAMMA_T = Anchor("dgamma", "(dy * t)")
DYT_DT = Anchor("dt", "dt = dy * self.gamma.data")
DYT_SLOPE = Anchor("du", "(1.0 - t ** 2)")
DYT_DALPHA = Anchor("dalpha", "self.alpha.grad += (du * x).sum()")
DYT_DALPHA_SUM = Anchor("dalpha", "(du * x).sum()")
DYT_DX = Anchor("dx", "dx = self.alpha.data * du")
# alpha's starting value written as a number instead of alpha_init (constants.py fits it)
ALPHA = Constant("alpha", 0.5, POSITIVE, N_("with alpha = {value} hard-coded"))
ALPHA_ONE = replace(ALPHA, default=1.0)  # np.ones(1): the same mistake at 1

MISTAKES = [
    Mistake(
        "dyt-dalpha-not-summed",
        N_("DyT's dalpha not summed over every element"),
        N_("the forward, dx, dgamma and dbeta are right, dalpha is not: it is an array with one "
           "value per channel (alpha kept per channel, or du * x summed over the batch only) or "
           "one per row (summed over the last axis only), or one number N * D times too small "
           "(the mean); a batch of one, or a single channel, can hide the array"),
        N_("alpha is ONE scalar that multiplies every element of x, so each element sends its "
           "share du * x back to it: dalpha is the sum over every axis, the batch and the "
           "channels alike, one number of shape (1,)."),
        {"dyt": [
            ((DYT_ALPHA, "np.full(self.normalized_shape, alpha_init, dtype)"),
             (DYT_DALPHA_SUM, "(du * x).sum(axis=lead)")),
            ((DYT_DALPHA, "self.alpha.grad = self.alpha.grad + (du * x).sum(axis=-1)"),),
            ((DYT_DALPHA_SUM, "(du * x).mean()"),),
        ]},
        taught=explain("dyt", N_("alpha gets a share from every element")),
    ),
    Mistake(
        "dyt-tanh-derivative-from-input",
        N_("DyT's tanh derivative taken from its input"),
        N_("the forward, dgamma and dbeta are right; dx and dalpha are not: the gradient through "
           "tanh was multiplied by 1 - x**2 (or 1 - (alpha * x)**2), the input squared, which "
           "turns negative where it exceeds 1 in size, instead of 1 - t**2 with t = tanh(alpha * x)"),
        N_("d tanh(u) / du = 1 - tanh(u)**2: written with tanh's output t, which the forward "
           "already has, not with its input; it lies between 0 and 1 and vanishes where tanh "
           "saturates."),
        {"dyt": [((DYT_SLOPE, "(1.0 - x ** 2)"),),
                 ((DYT_SLOPE, "(1.0 - (self.alpha.data * x) ** 2)"),)]},
        taught=explain("dyt", N_("tanh's slope, 1 - t**2")),
    ),
    Mistake(
        "dyt-dx-missing-alpha",
        N_("DyT's dx without the factor alpha"),
        N_("the forward and every parameter gradient are right; dx is off by the factor alpha "
           "everywhere (1 / alpha times the right value): the chain rule stopped at u = alpha * x"),
        N_("u = alpha * x, so du/dx = alpha: dx = alpha * du, the last link of the chain."),
        {"dyt": [((DYT_DX, "dx = du"),)]},
        taught=explain("dyt", N_("scale by alpha: the share to x")),
    ),
    Mistake(
        "dyt-dalpha-missing-x",
        N_("DyT's dalpha without the factor x"),
        N_("the forward, dx, dgamma and dbeta are right; dalpha is the sum of du alone: the "
           "factor x of d(alpha * x) / d alpha was dropped"),
        N_("u = alpha * x, so du/dalpha = x: dalpha sums du * x, the gradient at u times the "
           "input, over every element."),
        {"dyt": [((DYT_DALPHA_SUM, "du.sum()"),)]},
        taught=explain("dyt", N_("scale by alpha: the share to alpha")),
    ),
    Mistake(
        "dyt-gamma-inside-tanh",
        N_("DyT with gamma inside the tanh"),
        N_("every number is off, the forward first: y = tanh(alpha * gamma * x) + beta, so gamma "
           "scales tanh's input instead of its output and the outputs never leave (beta - 1, "
           "beta + 1)"),
        N_("DyT squashes first and scales after, as LayerNorm's affine comes after the "
           "normalisation: y = gamma * tanh(alpha * x) + beta, so gamma can undo the squashing's "
           "range."),
        {"dyt": [(
            (DYT_U, "u = self.alpha.data * self.gamma.data * x"),
            (DYT_SCALE, "y = y"),
            (DYT_DGAMMA_T, "(dy * (1.0 - t ** 2) * self.alpha.data * x)"),
            (DYT_DT, "dt = dy"),
            (DYT_DALPHA_SUM, "(du * self.gamma.data * x).sum()"),
            (DYT_DX, "dx = self.alpha.data * self.gamma.data * du"),
        )]},
        taught=explain("dyt", N_("the forward: tanh, then scale, then shift")),
    ),
    Mistake(
        "dyt-dgamma-from-input",
        N_("DyT's dgamma computed with the input instead of t"),
        N_("the forward, dx, dalpha and dbeta are right, dgamma is not: it sums dy * x (or "
           "dy * alpha * x) where gamma multiplies t = tanh(alpha * x), as if gamma scaled the "
           "input (LayerNorm's dgamma = sum(dy * x_hat) with x in place of x_hat)"),
        N_("y = gamma * t + beta, so dy/dgamma = t: dgamma sums dy * t over the leading axes, "
           "t being what gamma multiplies."),
        {"dyt": [((DYT_DGAMMA_T, "(dy * x)"),),
                 ((DYT_DGAMMA_T, "(dy * self.alpha.data * x)"),)]},
        taught=explain("dyt", N_("scale: the share to gamma")),
    ),
    Mistake(
        "dyt-dbeta-not-summed",
        N_("DyT's dbeta missing, or averaged instead of summed"),
        N_("everything is right except dbeta: it stays zero (beta's gradient was never added), "
           "or it is the mean of dy over the leading axes, too small by their size"),
        N_("beta is added at every position of the leading axes, so its gradient is the sum of "
           "dy over them, one entry per element of normalized_shape, added into beta.grad."),
        {"dyt": [((DYT_DBETA, "pass"),),
                 ((DYT_DBETA, "self.beta.grad += dy.mean(axis=lead)"),)]},
        taught=explain("dyt", N_("shift: the share to beta")),
    ),
    Mistake(
        "dyt-backward-no-gamma",
        N_("DyT's backward without the factor gamma"),
        N_("the forward, dgamma and dbeta are right; dx and dalpha are not: the gradient was "
           "sent into tanh as dy itself instead of dy * gamma"),
        N_("y = gamma * t + beta, so the gradient reaching t is scaled by gamma: dt = dy * gamma, "
           "and the rest of the backward (du, dx, dalpha) starts from dt."),
        {"dyt": [((DYT_DT, "dt = dy"),)]},
        taught=explain("dyt", N_("scale: the share to t")),
    ),
    Mistake(
        "dyt-alpha-init-ignored",
        N_("DyT's alpha_init ignored"),
        N_("every number is off unless alpha_init happens to be the value hard-coded: alpha "
           "starts at 0.5 (or 1) whatever alpha_init says, so tanh's input is scaled wrongly; "
           "once alpha is assigned through alpha.data everything is right"),
        N_("alpha's starting value is the constructor's alpha_init: alpha = np.full(1, "
           "alpha_init). Models tune it (the DyT authors' LLaMA runs start wider models at "
           "smaller values), so a constant is wrong."),
        {"dyt": [((DYT_ALPHA, WithConstant("np.full(1, {alpha}, dtype)", ALPHA)),),
                 ((DYT_ALPHA, WithConstant("np.full(1, {alpha}, dtype)", ALPHA_ONE)),)]},
        taught=explain("dyt", N_("the forward: tanh, then scale, then shift")),
    ),
    Mistake(
        "dyt-tanh-derivative-missing",
        N_("DyT's backward without tanh's derivative"),
        N_("the forward, dgamma and dbeta are right; dx and dalpha are not, worst where tanh "
           "saturates: the gradient went through tanh unchanged (du = dt), as if tanh were the "
           "identity, instead of du = dt * (1 - t**2)"),
        N_("Every node of the chain contributes its slope: tanh's is 1 - t**2 with t its output, "
           "close to 0 where it saturates, so du = dt * (1 - t**2)."),
        {"dyt": [((DYT_SLOPE, "1.0"),)]},
        taught=explain("dyt", N_("tanh's slope, 1 - t**2")),
    ),
]
