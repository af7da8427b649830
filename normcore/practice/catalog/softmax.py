"""Softmax, log-softmax and cross-entropy mistakes (the last also in the MLP's loss)."""

from ...i18n import N_
from ..constants import SMALL, Constant, WithConstant
from .base import Anchor, Mistake, notebook, same, solution
from .attention import ATT_DSCORES, ATT_SHIFT
from .blocks import MLP_DLOGITS, MLP_SHIFT
from .logits import Z_LSE


# The pieces of the reference answers that the mutants replace (see base.Anchor).
SM_AXIS = Anchor("axis", "self.axis = axis")
SM_SHIFT = Anchor("shift", "z = x - x.max(axis=a, keepdims=True)")
SM_DX = Anchor("dx", "dx = y * (dy - (dy * y).sum(axis=a, keepdims=True))")
CE_LOGP = Anchor("logp", "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))")
CE_LOSS = Anchor("loss", "loss = -logp[rows, self.targets].mean()")
CE_DLOGITS = Anchor("dlogits", "dlogits = dloss * (self.p - onehot) / n")
# the pieces of one mistake each on the loss and dlogits lines (of cross_entropy and of
# mlp_with_batchnorm), so that the sign flipped and the sum instead of the mean combine
LOSS_SIGN, LOSS_MEAN = Anchor("loss", "= -logp["), Anchor("loss", "].mean()")
DLOGITS_N = Anchor("dlogits", ") / n")
CE_DLOGITS_SIGN = Anchor("dlogits", "(self.p - onehot)")
CE_SHIFT = Anchor("shift", "z = x - x.max(axis=1, keepdims=True)")
LSM_LOGP = Anchor("logp", "self.logp = z - np.log(np.exp(z).sum(axis=a, keepdims=True))")
LSM_DX = Anchor("dx", "dx = dy - p * dy.sum(axis=a, keepdims=True)")

# The constants a candidate may choose otherwise (constants.py fits them).
LOG_EPS = Constant("eps", 1e-12, SMALL, N_("with eps = {value} inside the log"))
CLIP = Constant("clip", 1e-7, SMALL, N_("with the probabilities clipped at {value}"))

MISTAKES = [
    Mistake(
        "softmax-no-max-shift",
        N_("softmax without subtracting the max"),
        N_("right for ordinary logits, nan (or inf) for large ones: exp(1000) overflows to inf "
           "and inf / inf is nan (in float32 already exp(89) overflows)"),
        N_("Softmax is shift invariant: compute exp(x - max(x)) over the axis, so the largest "
           "exponent is exp(0) = 1 and nothing can overflow."),
        {"softmax": [((SM_SHIFT, "z = x"),)],
         "attention": [((ATT_SHIFT, "z = scores"),)]},
        taught=notebook("interview_practice",
                       N_("9.1 (Softmax: the whole Jacobian, and the max shift)")),
    ),
    Mistake(
        "softmax-diagonal-jacobian",
        N_("softmax backward with the diagonal of the Jacobian only"),
        N_("the forward is right, dx is not: dx = dy * y * (1 - y), as if each y_i depended on "
           "x_i alone (a sigmoid's derivative); the correct dx sums to zero along the axis, "
           "this one does not"),
        N_("Every y_i depends on every x_j of its slice: dy_i/dx_j = y_i ([i == j] - y_j). "
           "Applied to dy that is dx = y * (dy - sum(dy * y)) along the axis."),
        {"softmax": [((SM_DX, "dx = dy * y * (1 - y)"),)],
         "attention": [((ATT_DSCORES, "dscores = dattn * attn * (1 - attn)"),)]},
        taught=notebook("interview_practice",
                       N_("9.1 (Softmax: the whole Jacobian, and the max shift)")),
    ),
    Mistake(
        "softmax-wrong-axis",
        N_("softmax along the wrong axis"),
        N_("right when the axis is the last one, wrong for any other: the slices that sum to 1 "
           "are the last axis's (or the first axis's), not those of the axis asked for"),
        N_("Take the max, the exponentials' sum and, in the backward, sum(dy * y) along "
           "self.axis, with keepdims=True so they broadcast back."),
        {"softmax": [((SM_AXIS, "self.axis = -1"),), ((SM_AXIS, "self.axis = 0"),)],
         "log_softmax": [((SM_AXIS, "self.axis = -1"),), ((SM_AXIS, "self.axis = 0"),)]},
        taught=solution("softmax"),
    ),
    Mistake(
        "ce-summed-not-averaged",
        N_("cross-entropy summed over the batch instead of averaged"),
        N_("right for one sample, N times too large for N samples: the loss, or dlogits, or "
           "both, miss the 1 / N of the mean reduction"),
        N_("CrossEntropyLoss() takes the mean over the N samples: loss = -sum(logp[n, y_n]) / N "
           "and dlogits = dloss * (p - onehot) / N; the forward and the backward agree."),
        same(("cross_entropy", "mlp_with_batchnorm"),
             ((LOSS_MEAN, "].sum()"), (DLOGITS_N, ")")),
             ((DLOGITS_N, ")"),),
             ((LOSS_MEAN, "].sum()"),)),
        taught=notebook("interview_practice",
                       N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "ce-unfused-gradient",
        N_("cross-entropy gradient through 1 / p and the softmax Jacobian"),
        N_("right for ordinary logits, nan for a confident wrong prediction: dL/dp = -1 / p "
           "overflows when the target's probability underflows to 0, and inf * 0 is nan"),
        N_("Fuse the two steps: through log-softmax the gradient is dloss * (p - onehot) / N, "
           "with no division by p; derive it once and use it."),
        {"cross_entropy": [((CE_DLOGITS,
                             "dp = np.zeros_like(self.p)\n"
                             "        dp[rows, self.targets] = -dloss / (n * self.p[rows, self.targets])\n"
                             "        dlogits = self.p * (dp - (dp * self.p).sum(axis=1, keepdims=True))"),)]},
        taught=notebook("interview_practice",
                       N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "ce-log-of-softmax",
        N_("cross-entropy as log(softmax(x)), which underflows"),
        N_("right for ordinary logits, an infinite loss for a confident wrong prediction: the "
           "target's probability underflows to 0 and log(0) = -inf, where the true loss is "
           "about 800"),
        N_("Compute log-softmax directly: logp = z - log(sum(exp(z))) with z = x - max(x); it is "
           "finite however small the probability."),
        {"cross_entropy": [((CE_LOGP, "logp = np.log(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True))"),)]},
        taught=notebook("interview_practice",
                       N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "ce-no-onehot",
        N_("cross-entropy gradient without the onehot"),
        N_("the loss is right, dlogits is not: it is p / N, which is positive everywhere and sums "
           "to 1 / N per row, where the right gradient sums to zero"),
        N_("The target's own logit gets the -1: dlogits = dloss * (p - onehot(y)) / N, because "
           "d logp_y / d x_j = [y == j] - p_j."),
        {"cross_entropy": [((CE_DLOGITS, "dlogits = dloss * self.p / n"),)]},
        taught=notebook("interview_practice",
                       N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "lsm-log-of-softmax",
        N_("log-softmax as log(softmax(x)), which underflows"),
        N_("right for ordinary logits, -inf for a logit far below the others: its probability "
           "exp(-800) underflows to 0 and log(0) = -inf, where the true log-probability is about "
           "-800"),
        N_("Never form the probabilities first: logp = z - log(sum(exp(z))) with z = x - max(x) "
           "takes the log of a sum that is at least 1, so it is finite however small p is."),
        {"log_softmax": [
            ((LSM_LOGP, "self.logp = np.log(np.exp(z) / np.exp(z).sum(axis=a, keepdims=True))"),),
        ]},
        taught=notebook("interview_practice",
                       N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "lsm-diagonal-backward",
        N_("log-softmax backward with the diagonal of the Jacobian only"),
        N_("the forward is right, dx is not: dx = dy - p * dy (= dy * (1 - p)), as if logp_i "
           "depended on x_i alone; the correct dx = dy - p * sum(dy) sums to zero along the "
           "axis, this one does not"),
        N_("logp_i = x_i - log(sum_j exp(x_j)) depends on every x_j through the log of the sum: "
           "d logp_i / d x_j = [i == j] - p_j. Sum that against dy over i."),
        {"log_softmax": [
            ((LSM_DX, "dx = dy - p * dy"),),
        ]},
        taught=solution("log_softmax"),
    ),
    Mistake(
        "lsm-softmax-backward",
        N_("log-softmax backward written with softmax's formula"),
        N_("the forward is right, dx is not: it is softmax's backward y * (dy - sum(dy * y)) "
           "with the log-probabilities in place of y (or with y = exp(logp)), which is the "
           "gradient of a different function"),
        N_("LogSoftmax is not Softmax: differentiate logp = z - log(sum(exp(z))) itself; its "
           "Jacobian is I - 1 p^T, which gives dx = dy - p * sum(dy) along the axis."),
        {"log_softmax": [
            ((LSM_DX, "dx = self.logp * (dy - (dy * self.logp).sum(axis=a, keepdims=True))"),),
            ((LSM_DX, "dx = p * (dy - (dy * p).sum(axis=a, keepdims=True))"),),
        ]},
        taught=solution("log_softmax"),
    ),
    Mistake(
        "ce-mean-over-classes",
        N_("cross-entropy averaged over every entry of the (N, C) array"),
        N_("the loss is C times too small (C the number of classes), and so are the gradients "
           "when the backward follows it: -mean(onehot * logp) divides by N * C, where the "
           "mean is over the N samples only"),
        N_("Only the target's entry of each row counts: loss = -sum_n logp[n, y_n] / N. "
           "np.mean over the whole (N, C) array also divides by the C classes."),
        {
            "mlp_with_batchnorm": [
                ((CE_LOSS, "loss = -logp[rows, self.targets].sum() / logp.size"),
                 (MLP_DLOGITS, "dlogits = dloss * (p - onehot) / p.size")),
                ((CE_LOSS, "loss = -logp[rows, self.targets].sum() / logp.size"),),
            ],
            "cross_entropy": [
                ((CE_LOSS, "loss = -logp[rows, self.targets].sum() / logp.size"),
                 (CE_DLOGITS, "dlogits = dloss * (self.p - onehot) / self.p.size")),
                ((CE_LOSS, "loss = -logp[rows, self.targets].sum() / logp.size"),),
            ],
        },
        taught=solution("mlp_with_batchnorm"),
    ),
    Mistake(
        "lse-no-max-shift",
        N_("log-sum-exp without subtracting the max"),
        N_("right for ordinary logits, inf or nan for large ones: log(sum(exp(x))) overflows "
           "when a logit is above about 709 (89 in float32), and logp = x - inf is -inf, the "
           "loss inf and the gradients nan"),
        N_("log(sum(exp(x))) = m + log(sum(exp(x - m))) with m = max(x): subtract the max first, "
           "so the largest exponent is exp(0) = 1 and the log's argument lies in [1, C]."),
        {"log_softmax": [((SM_SHIFT, "z = x"),)],
         "cross_entropy": [((CE_SHIFT, "z = x"),)],
         "mlp_with_batchnorm": [((MLP_SHIFT, "z = logits"),)],
         "z_loss": [((Z_LSE, "lse = np.log(np.exp(x).sum(axis=1, keepdims=True))"),)]},
        taught=notebook("interview_practice", N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "ce-log-eps",
        N_("cross-entropy with eps inside the log, or the probabilities clipped"),
        N_("right for ordinary logits, too small a loss for a confident wrong prediction: "
           "log(p + 1e-12) or log(clip(p, 1e-7, 1 - 1e-7)) caps each sample's loss near 28 (or "
           "16), where the true loss of a target 800 below the others is about 800"),
        N_("No eps is needed when the log-probabilities come from log-softmax: logp = z - "
           "log(sum(exp(z))) is finite for any logits. An eps or a clip changes the loss exactly "
           "where it matters most."),
        {"cross_entropy": [
            ((CE_LOGP, WithConstant("logp = np.log(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True) "
                                    "+ {eps})", LOG_EPS)),),
            ((CE_LOGP, WithConstant("logp = np.log(np.clip(np.exp(z) / np.exp(z).sum(axis=1, "
                                    "keepdims=True), {clip}, 1 - {clip}))", CLIP)),),
            # in the loss alone: the gradient stays p - onehot
            ((CE_LOSS, WithConstant("loss = -np.log(self.p[rows, self.targets] + {eps}).mean()",
                                    LOG_EPS)),),
            ((CE_LOSS, WithConstant("loss = -np.log(np.clip(self.p[rows, self.targets], {clip}, "
                                    "1 - {clip})).mean()", CLIP)),),
            # clipped from below only: np.maximum(p, c), or np.clip(p, c, 1)
            ((CE_LOSS, WithConstant("loss = -np.log(np.maximum(self.p[rows, self.targets], "
                                    "{clip})).mean()", CLIP)),),
        ]},
        taught=notebook("interview_practice", N_("9.2 (Cross-entropy: log-softmax, and the fused gradient)")),
    ),
    Mistake(
        "ce-first-sample-only",
        N_("cross-entropy of the first sample only"),
        N_("right for a batch of one, wrong for N > 1: the loss is -logp[0, y_0], the first "
           "row's, and dlogits is that row's gradient with zeros elsewhere (or the gradient is "
           "the whole batch's while the loss is not)"),
        N_("The loss is the mean over ALL N rows of -logp[n, y_n]: index every row at once, "
           "logp[np.arange(N), y], and give every row its share (p - onehot) / N of the gradient."),
        {"cross_entropy": [
            ((CE_LOSS, "loss = -logp[0, self.targets[0]]"),
             (CE_DLOGITS, "dlogits = np.zeros_like(self.p)\n"
                          "        dlogits[0] = dloss * (self.p[0] - onehot[0])")),
            ((CE_LOSS, "loss = -logp[0, self.targets[0]]"),),
        ]},
        taught=solution("cross_entropy"),
    ),
    Mistake(
        "ce-sign-flipped",
        N_("cross-entropy with the wrong sign"),
        N_("the loss is negative: mean(logp[n, y_n]) instead of -mean(...), the log-likelihood "
           "instead of its negative; dlogits is right, or flipped too, (onehot - p) / N, so a "
           "descent step would make the predictions worse"),
        N_("Cross-entropy is the NEGATIVE mean log-probability of the targets: it is >= 0, and "
           "its gradient (p - onehot) / N pushes the target's logit up when followed downhill."),
        {"cross_entropy": [
            ((LOSS_SIGN, "= logp["),),
            ((LOSS_SIGN, "= logp["), (CE_DLOGITS_SIGN, "(onehot - self.p)")),
        ]},
        taught=solution("cross_entropy"),
    ),
    Mistake(
        "ce-logits-in-place",
        N_("cross-entropy shifts the caller's logits in place"),
        N_("the loss and dlogits are right, but the logits array passed to forward has changed: "
           "the max was subtracted in place (logits -= logits.max(...)), so the caller's "
           "array, the previous layer's output, now holds the shifted values"),
        N_("Never edit an input you were given: z = logits - logits.max(axis=1, keepdims=True) "
           "makes a new array; -= writes into the caller's."),
        {"cross_entropy": [((CE_SHIFT, "x -= x.max(axis=1, keepdims=True)\n        z = x"),)]},
        taught=solution("cross_entropy"),
    ),
]
