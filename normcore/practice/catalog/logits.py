"""Mistakes of logit control: soft-capping, y = c * tanh(x / c), and the z-loss added to the
cross-entropy (its log-sum-exp without the max shift is the softmax family's
``lse-no-max-shift``)."""

from ...i18n import N_
from .base import Anchor, Mistake, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
CAP_SLOPE = Anchor("slope", "self.slope = 1.0 - t ** 2")
CAP_Y = Anchor("y", "y = self.cap * t")
CAP_DX = Anchor("dx", "dx = dy * self.slope")
Z_LSE = Anchor("lse", "lse = m + np.log(np.exp(x - m).sum(axis=1, keepdims=True))")
Z_CACHE = Anchor("cache-lse", "self.lse = lse")
Z_TERM = Anchor("z", "z = self.z_loss * (lse ** 2).mean()")
Z_DZ = Anchor("dz", "dz = 2.0 * self.z_loss * self.lse * self.p / n")

MISTAKES = [
    Mistake(
        "softcap-slope-from-capped-output",
        N_("soft-cap's slope written as 1 - y**2 with the capped output y"),
        N_("the forward is right, dx is not: it was multiplied by 1 - y**2, a plain tanh's "
           "slope at the capped output y = c * tanh(x / c), which turns negative wherever "
           "|y| > 1, instead of 1 - (y / c)**2"),
        N_("tanh's slope comes from tanh's own output t = tanh(x / c) = y / c: dx = dy * "
           "(1 - t**2) = dy * (1 - (y / c)**2). The c of the forward and the 1 / c of x / c "
           "cancel; the c inside the square does not."),
        {"soft_cap": [((CAP_SLOPE, "self.slope = 1.0 - (self.cap * t) ** 2"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-slope-without-cap",
        N_("soft-cap's backward with tanh's slope at x instead of x / c"),
        N_("the forward is right, dx is not: it was multiplied by 1 - tanh(x)**2, the cap "
           "forgotten inside the tanh, so the gradient fades where |x| passes 1 instead of "
           "where it nears c"),
        N_("The tanh acts on u = x / c, so its slope is taken there: 1 - tanh(x / c)**2, the "
           "forward's own t squared."),
        {"soft_cap": [((CAP_SLOPE, "self.slope = 1.0 - np.tanh(x) ** 2"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-backward-stray-factor",
        N_("soft-cap's backward with a factor c or 1 / c left over"),
        N_("the forward is right, dx is c (or 1 / c) times the right one everywhere: only one "
           "of the two factors of the chain rule was kept, the outer c of c * tanh or the inner "
           "1 / c of x / c"),
        N_("y = c * tanh(u) with u = x / c: dy/du = c * (1 - t**2) and du/dx = 1 / c, so the two "
           "cancel and dx = dy * (1 - t**2)."),
        {"soft_cap": [((CAP_DX, "dx = dy * self.slope / self.cap"),),
                      ((CAP_DX, "dx = self.cap * dy * self.slope"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-slope-from-input",
        N_("soft-cap's tanh derivative taken from its input"),
        N_("the forward is right, dx is not: it was multiplied by 1 - (x / c)**2, tanh's input "
           "squared, which turns negative where |x| > c, instead of 1 - tanh(x / c)**2"),
        N_("d tanh(u) / du = 1 - tanh(u)**2: written with tanh's output t = tanh(x / c), which "
           "the forward already has, not with its input u = x / c."),
        {"soft_cap": [((CAP_SLOPE, "self.slope = 1.0 - (x / self.cap) ** 2"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-slope-missing",
        N_("soft-cap's backward without tanh's derivative"),
        N_("the forward is right, dx is dy itself: the gradient went through the cap unchanged, "
           "as if it were the identity, which it is only where |x| << c"),
        N_("The cap is the identity only near 0; its slope 1 - tanh(x / c)**2 falls to 0 as |x| "
           "nears and passes c: dx = dy * (1 - t**2)."),
        {"soft_cap": [((CAP_DX, "dx = dy"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-outer-cap-missing",
        N_("soft-cap's forward without the outer c"),
        N_("every number is off, the forward first: y = tanh(x / c) lies in (-1, 1) instead of "
           "(-c, c), and near 0 it is x / c instead of x"),
        N_("The cap scales the tanh back up: y = c * tanh(x / c), so that y ~ x where |x| << c "
           "and |y| < c everywhere."),
        {"soft_cap": [((CAP_Y, "y = t"),)]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "softcap-hard-clip",
        N_("soft-cap written as a hard clip"),
        N_("every number is off: y = clip(x, -c, c) is x itself below the cap and c beyond it, "
           "and its gradient is 1 or 0, where c * tanh(x / c) bends smoothly and its slope "
           "fades gradually"),
        N_("Soft-capping is smooth on purpose: y = c * tanh(x / c) keeps a gradient for every "
           "logit, however large, where a clip gives those beyond c none."),
        {"soft_cap": [((CAP_Y, "y = np.clip(x, -self.cap, self.cap)"),
                       (CAP_SLOPE, "self.slope = (np.abs(x) < self.cap) * 1.0"))]},
        taught=solution("soft_cap"),
    ),
    Mistake(
        "zloss-grad-no-softmax",
        N_("z-loss gradient without the softmax factor"),
        N_("the loss is right, dlogits is not: the z-loss's share was 2 * z_loss * lse / N on "
           "every class alike, where d lse / d x_j is the softmax p_j, so the share is "
           "2 * z_loss * lse * p_j / N"),
        N_("lse = log(sum(exp(x))) has d lse / d x_j = exp(x_j) / sum(exp(x)) = p_j: the z-loss's "
           "gradient is 2 * z_loss * lse * p, one value per class."),
        {"z_loss": [((Z_DZ, "dz = 2.0 * self.z_loss * self.lse / n"),)]},
        taught=solution("z_loss"),
    ),
    Mistake(
        "zloss-grad-factor-2-dropped",
        N_("z-loss gradient without the factor 2"),
        N_("the loss is right, dlogits is not: the z-loss's share is half what it should be, "
           "z_loss * lse * p / N: the 2 of d(lse**2) = 2 * lse * d lse was dropped"),
        N_("The z-loss squares lse, so its derivative brings down a 2: "
           "2 * z_loss * lse * p / N."),
        {"z_loss": [((Z_DZ, "dz = self.z_loss * self.lse * self.p / n"),)]},
        taught=solution("z_loss"),
    ),
    Mistake(
        "zloss-grad-missing",
        N_("z-loss left out of the gradient"),
        N_("the loss is right, dlogits is the plain cross-entropy's: the z-loss was added to the "
           "loss but its gradient 2 * z_loss * lse * p / N never reached dlogits"),
        N_("Every term of the loss sends its gradient back: dlogits = dloss * (p - onehot + "
           "2 * z_loss * lse * p) / N."),
        {"z_loss": [((Z_DZ, "dz = 0.0"),)]},
        taught=solution("z_loss"),
    ),
    Mistake(
        "zloss-shifted-lse",
        N_("z-loss of the shifted log-sum-exp, the max not added back"),
        N_("right where every row's largest logit is 0, wrong elsewhere: the z-loss squared "
           "log(sum(exp(x - max(x)))), a number between 0 and log(C), instead of log Z = "
           "max(x) + log(sum(exp(x - max(x))))"),
        N_("The max shift keeps exp from overflowing and leaves the softmax alone, but log Z "
           "itself is m + log(sum(exp(x - m))): add m back before squaring it."),
        {"z_loss": [((Z_TERM, "z = self.z_loss * ((lse - m) ** 2).mean()"),
                     (Z_CACHE, "self.lse = lse - m"))]},
        taught=solution("z_loss"),
    ),
    Mistake(
        "zloss-not-squared",
        N_("z-loss of log Z instead of log(Z)**2"),
        N_("every number is off: the z-loss added z_loss * mean(lse), which rewards a negative "
           "log Z without bound, instead of z_loss * mean(lse**2), which pulls log Z to 0 from "
           "either side"),
        N_("The z-loss is z_loss * log(Z)**2 (PaLM): a square, whose gradient 2 * z_loss * lse "
           "* p changes sign with lse."),
        {"z_loss": [((Z_TERM, "z = self.z_loss * lse.mean()"),
                     (Z_DZ, "dz = self.z_loss * self.p / n"))]},
        taught=solution("z_loss"),
    ),
    Mistake(
        "zloss-summed-not-averaged",
        N_("z-loss summed over the batch instead of averaged"),
        N_("right for one sample, wrong for N: the z-loss's term, or its gradient, or both, "
           "miss the 1 / N of the mean that the cross-entropy has"),
        N_("The loss is the mean over the N rows of both terms: z_loss * sum(lse**2) / N, and "
           "its gradient 2 * z_loss * lse * p / N; the forward and the backward agree."),
        {"z_loss": [((Z_TERM, "z = self.z_loss * (lse ** 2).sum()"),
                     (Z_DZ, "dz = 2.0 * self.z_loss * self.lse * self.p")),
                    ((Z_DZ, "dz = 2.0 * self.z_loss * self.lse * self.p"),)]},
        taught=solution("z_loss"),
    ),
]
