"""BatchNorm, LayerNorm, RMSNorm and GroupNorm mistakes, and the ones the norm layers share
with the other exercises that contain a norm (its backward, its parameters' gradients).

One file, though longer than the others: ``MISTAKES`` is in catalog order (the order of
``normcore practice list --mistakes`` and of the docs' catalog page), where BatchNorm's own
mistakes and the ones every norm shares alternate; a file for BatchNorm's would reorder them.
BatchNorm's mistakes in its running statistics are Batch Renorm's too (its running update is
BatchNorm's): they carry its variants here, one entry each (``RUNNING``).
"""

from ...i18n import N_
from ..constants import FRACTION, Constant, WithConstant
from .base import Anchor, Mistake, Published, explain, notebook, same, solution
from .attention import ATT_DW, QK_DGAMMA, QK_DNORM
from .batch_renorm import BR_EVAL
from .blocks import (BLOCK_DB1, BLOCK_DB2, BLOCK_DW1, BLOCK_DW2, MLP_DB1, MLP_DB2, MLP_DBETA,
                     MLP_DGAMMA, MLP_DH, MLP_DW1, MLP_DW2, MLP_VAR)
from .dyt import DYT_DALPHA, DYT_DBETA, DYT_DGAMMA
from .fold_batchnorm import FOLD_SCALE


# The pieces of the reference answers that the mutants replace (see base.Anchor).
BN_RUNNING_MEAN = Anchor("running-mean", "(1 - m) * self.running_mean + m * mean.ravel()")
BN_RUNNING_VAR = Anchor("running-var", "(1 - m) * self.running_var + m * var.ravel()")
BN_UNBIASED = Anchor("running-var", "var.ravel() * n / (n - 1)")
BN_AFTER_UPDATE = Anchor("rstd", "        rstd = ")  # the first line after the running update
BN_BATCH_STATS = Anchor("batch-stats",
                        "batch_stats = self.training or not self.track_running_stats")
BN_UPDATE = Anchor("update-running", "if self.training and self.track_running_stats:")
BN_NEW_MEAN = Anchor("running-mean", "+ m * mean.ravel()")
BN_NEW_VAR = Anchor("running-var", "+ m * var.ravel()")
BN_EVAL_BACKWARD = Anchor("eval-backward", "if not batch_stats:")
BN_EVAL_VAR = Anchor("eval-var", "var = self.running_var.reshape(view)")
BN_MOMENTUM = Anchor("momentum",
                     "1.0 / self.num_batches_tracked if self.momentum is None else self.momentum")
BN_M = Anchor("momentum", "m = ")
BN_SET_MEAN = Anchor("running-mean", "self.running_mean = ")
BN_SET_VAR = Anchor("running-var", "self.running_var = ")
BN_AFFINE = Anchor("affine", "if self.gamma is not None:")  # the forward's gamma and beta
VAR = Anchor("var", "var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)")
VAR_GROUPED = Anchor("var", "var = ((xg - mean) ** 2).mean(axis=-1, keepdims=True)")
RSTD = Anchor("rstd", "np.sqrt(var + self.eps)")
RRMS = Anchor("rrms", "np.sqrt(ms + eps)")
MEAN_SQUARE = Anchor("mean-square", "ms = (x ** 2).mean(axis=axes, keepdims=True)")
AXES_TRAILING = Anchor("axes", "axes = tuple(range(-len(self.normalized_shape), 0))")
LEAD = Anchor("lead", "lead = tuple(range(dy.ndim - len(axes)))")
DX = Anchor("dx", "dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)")
DX_GROUPED = Anchor("dx", "dx = rstd * (dx_hat_g - mean_dx_hat - x_hat_g * mean_dx_hat_x_hat)")
_N_OVER_N_MINUS_1 = " * ({0}.size // rstd.size) / ({0}.size // rstd.size - 1)"
DX_RMS = Anchor("dx", "dx = rrms * (dx_hat - x_hat * mean_dx_hat_x_hat)")
BN_MEAN = Anchor("mean", "mean = x.mean(axis=axes, keepdims=True)")
BN_MEAN_DX_HAT = Anchor("mean-dx-hat", "mean_dx_hat = dx_hat.mean(axis=axes, keepdims=True)")
BN_MEAN_DX_HAT_X_HAT = Anchor("mean-dx-hat-x-hat",
                              "mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)")
DGAMMA_AXES = Anchor("dgamma", "self.gamma.grad += (dy * x_hat).sum(axis=axes)")
DBETA_AXES = Anchor("dbeta", "self.beta.grad += dy.sum(axis=axes)")
DGAMMA_LEAD = Anchor("dgamma", "self.gamma.grad += (dy * x_hat).sum(axis=lead)")
DBETA_LEAD = Anchor("dbeta", "self.beta.grad += dy.sum(axis=lead)")
GROUP = Anchor("group", "return a.reshape(a.shape[0], self.num_groups, -1)")
UNGROUP = Anchor("ungroup", "return ag.reshape(shape)")
NORMS = ("batchnorm", "layernorm", "rmsnorm", "groupnorm")
# a hard-coded weight of the new batch in the running update (constants.py fits it)
MOMENTUM = Constant("momentum", 0.9, FRACTION,
                    N_("with momentum = {value} hard-coded (the new batch's weight)"))
MEAN_VAR_NORMS = ("batchnorm", "layernorm", "groupnorm")
RUNNING = ("batchnorm", "batch_renorm")  # the exercises with BatchNorm's running statistics

# the published designs some entries below are in some exercises (checked in the code itself)
KERAS_MOMENTUM = Published(
    N_("momentum as the decay of the running value (Keras' convention)"),
    N_("Keras, `BatchNormalization(momentum=0.99)`, since 2015: `moving = moving * momentum + "
       "batch * (1 - momentum)`, `keras/src/layers/normalization/batch_normalization.py`"),
    N_("PyTorch's convention, which the exercise's momentum=0.1 follows: momentum weights the "
       "new batch, running = (1 - momentum) * running + momentum * batch"))
RMS_EPS_ADDED = Published(
    N_("eps added to the RMS, as RMSNorm's original code has it"),
    N_("Zhang and Sennrich, \"Root Mean Square Layer Normalization\" (NeurIPS 2019): their "
       "code bzhangGo/rmsnorm, rmsnorm_torch.py, divides by `rms + eps`"),
    N_("eps inside the square root, as LLaMA, T5 and torch.nn.RMSNorm have it: "
       "x / sqrt(mean(x**2) + eps)"))

MISTAKES = [
    Mistake(
        "bn-momentum-flipped",
        N_("momentum weights the old running value instead of the new batch"),
        N_("the running statistics follow the latest batch almost entirely: after one step they "
           "are 0.1 * initial + 0.9 * batch instead of 0.9 * initial + 0.1 * batch (the 'decay' "
           "convention, where 0.9 weights the old value, written with PyTorch's momentum=0.1), so "
           "evaluation depends mostly on the last training batch"),
        N_("Some Chinese material writes running = momentum * running + (1 - momentum) * batch "
           "with momentum = 0.9 (Keras' convention: momentum is the decay of the old value); "
           "PyTorch's momentum is the weight of the *new* batch, running = (1 - momentum) * "
           "running + momentum * batch, so its momentum=0.1 is that 0.9, and the decay formula "
           "given momentum=0.1 keeps 10% of the old value where PyTorch keeps 90%."),
        same(RUNNING,
            ((BN_RUNNING_MEAN, "m * self.running_mean + (1 - m) * mean.ravel()"),
             (BN_RUNNING_VAR, "m * self.running_var + (1 - m) * var.ravel()")),
            # the 'decay' convention with momentum=None still the cumulative average
            ((BN_MOMENTUM, "1.0 / self.num_batches_tracked if self.momentum is None "
                           "else 1 - self.momentum"),),
            # the 'decay' convention with its own default, momentum=0.9 (a layer built without
            # a momentum gets 0.9 where the reference's default is 0.1): right by default,
            # flipped for any momentum given, None raising a TypeError in the update
            ((BN_MOMENTUM, "None if self.momentum is None else "
                           "(0.9 if self.momentum == 0.1 else self.momentum)"),
             (BN_RUNNING_MEAN, "m * self.running_mean + (1 - m) * mean.ravel()"),
             (BN_RUNNING_VAR, "m * self.running_var + (1 - m) * var.ravel()")),
        ),
        taught=notebook("batchnorm", N_("7 (Momentum: which side does it weight?)")),
        published={"batchnorm": KERAS_MOMENTUM},
    ),
    Mistake(
        "bn-momentum-hard-coded",
        N_("momentum hard-coded instead of the momentum argument"),
        N_("the running statistics blend each batch with a fixed weight whatever momentum the "
           "layer was built with: right only when the argument happens to equal it, wrong for "
           "momentum=None (the cumulative average) and for any other value; 0.9 * running + "
           "0.1 * batch is a momentum of 0.1 written by hand"),
        N_("Read the weight of the new batch from self.momentum (PyTorch's convention: "
           "running = (1 - momentum) * running + momentum * batch), and use 1 / "
           "num_batches_tracked when it is None; never write the number itself."),
        same(RUNNING, ((BN_MOMENTUM, WithConstant("{momentum}", MOMENTUM)),),
             # momentum=None handled, any other momentum replaced by the number
             ((BN_MOMENTUM, WithConstant("1.0 / self.num_batches_tracked if self.momentum "
                                         "is None else {momentum}", MOMENTUM)),)),
        taught=notebook("batchnorm", N_("7 (Momentum: which side does it weight?)")),
    ),
    Mistake(
        "bn-running-var-biased",
        N_("biased variance in the running_var update"),
        N_("running_mean is right but running_var is too small by the factor (n - 1) / n, n being "
           "the number of values per channel in the batch (N, or N * L)"),
        N_("The running variance estimates the population variance, so it takes the unbiased "
           "batch variance (divide by n - 1), even though the normalisation itself uses the "
           "biased one."),
        same(RUNNING, ((BN_UNBIASED, "var.ravel()"),)),
        taught=notebook("batchnorm", N_("7 (Biased vs unbiased variance)")),
    ),
    Mistake(
        "var-unbiased-in-normalization",
        N_("unbiased variance (divide by n - 1) used to normalise"),
        N_("outputs are a little too small in magnitude (by about sqrt((n - 1) / n)), strongly so "
           "for small n such as a batch of 2"),
        N_("Normalise with the biased variance, the mean of the squared deviations (divide by n). "
           "The unbiased n / (n - 1) correction belongs only in BatchNorm's running_var update."),
        # the backward derived for the biased variance, or re-derived for n - 1 (its variance
        # term then has n / (n - 1), n = x_hat.size // rstd.size values per statistic)
        {
            "layernorm": [((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),),
                          ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),
                           (DX, DX[:-1] + _N_OVER_N_MINUS_1.format("x_hat") + ")"))],
            "batchnorm": [
                ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),
                 (BN_UNBIASED, "var.ravel()")),
                ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),),
                ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),
                 (DX, DX[:-1] + _N_OVER_N_MINUS_1.format("x_hat") + ")")),
            ],
            "groupnorm": [((VAR_GROUPED, "var = xg.var(axis=-1, ddof=1, keepdims=True)"),),
                          ((VAR_GROUPED, "var = xg.var(axis=-1, ddof=1, keepdims=True)"),
                           (DX_GROUPED, DX_GROUPED[:-1] + _N_OVER_N_MINUS_1.format("x_hat_g") + ")"))],
            "mlp_with_batchnorm": [
                ((MLP_VAR, "var = h.var(axis=0, ddof=1, keepdims=True)"),),
                ((MLP_VAR, "var = h.var(axis=0, ddof=1, keepdims=True)"),
                 (MLP_DH, "dh = rstd * (dh_hat - mean_dh_hat - h_hat * mean_dh_hat_h_hat * n / (n - 1))")),
            ],
        },
        taught=notebook("layernorm", N_("7 (Biased variance)")),
    ),
    Mistake(
        "eps-outside-sqrt",
        N_("eps added outside the square root"),
        N_("outputs differ slightly for ordinary inputs and a lot when the variance (or mean "
           "square) is comparable to eps; a constant row's input gradient is scaled by 1/eps "
           "instead of 1/sqrt(eps); a fold's W' and b' are off the same way where running_var "
           "is comparable to eps"),
        N_("Some Chinese material writes (x - mu) / (sigma + eps), and x / (RMS + eps) for "
           "RMSNorm; PyTorch, and this exercise, put eps inside the square root: (x - mu) / "
           "sqrt(sigma**2 + eps), x / sqrt(mean(x**2) + eps). For a variance of 1 the two differ "
           "by eps / 2 relative (5e-6 with eps = 1e-5); where the variance is comparable to eps "
           "they differ a lot, and a constant channel's input gradient is scaled by 1/eps "
           "instead of 1/sqrt(eps). eps added to the standard deviation is published too (the "
           "RMSNorm authors' PyTorch code, the Annotated Transformer)."),
        {
            **same(("batchnorm", "groupnorm"), ((RSTD, "(np.sqrt(var) + self.eps)"),)),
            # with the backward derived for sigma + eps: the variance term then carries
            # (sigma + eps) / sigma = 1 / sqrt(mean(x_hat**2))
            "layernorm": [((RSTD, "(np.sqrt(var) + self.eps)"),),
                          ((RSTD, "(np.sqrt(var) + self.eps)"),
                           (DX, "dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat / "
                                "np.maximum(np.sqrt((x_hat ** 2).mean(axis=axes, keepdims=True)), "
                                "1e-300))"))],  # a constant row: x_hat = 0, no variance term
            **same(("rmsnorm", "qk_norm"), ((RRMS, "(np.sqrt(ms) + eps)"),)),
            "transformer_block": [((RSTD, "(np.sqrt(var) + self.eps)"),)],
            "fold_batchnorm": [((FOLD_SCALE, "gamma / (np.sqrt(running_var) + eps)"),)],
        },
        taught=notebook("layernorm", N_("7 (eps inside the square root)")),
        published={"rmsnorm": RMS_EPS_ADDED, "qk_norm": RMS_EPS_ADDED},
    ),
    Mistake(
        "stats-over-too-few-axes",
        N_("statistics over too few axes"),
        N_("correct while the normalised part is a single axis, wrong as soon as it has several: "
           "a LayerNorm/RMSNorm with a multi-axis normalized_shape that only normalises the last "
           "axis, or a GroupNorm that normalises each channel on its own (InstanceNorm)"),
        N_("Reduce over every normalised axis at once: the last len(normalized_shape) axes, or "
           "for GroupNorm all channels of the group together with their spatial positions."),
        {
            # the statistics over the last axis; gamma's gradient summed over the leading
            # axes of the normalised shape (derived from the axes) or of the input (right)
            **same(("layernorm", "rmsnorm"), ((AXES_TRAILING, "axes = (-1,)"),),
                   ((AXES_TRAILING, "axes = (-1,)"),
                    (LEAD, "lead = tuple(range(dy.ndim - len(self.normalized_shape)))"))),
            "groupnorm": [((GROUP, "return a.reshape(a.shape[0], a.shape[1], -1)"),)],
        },
        taught=notebook("layernorm", N_("7 (Which axes, and train vs eval)")),
    ),
    Mistake(
        "ln-over-batch",
        N_("LayerNorm statistics taken over the batch"),
        N_("each feature is standardised across the samples (BatchNorm's axes) instead of each "
           "sample across its features; a single sample comes out as beta"),
        N_("LayerNorm normalises each sample on its own: the mean and variance run over the "
           "feature axes (the last ones), one pair of statistics per sample or token."),
        {"layernorm": [((AXES_TRAILING, "axes = (0,)"),)]},
        taught=notebook("interview_practice", N_("1 (Intuition: which axis)")),
    ),
    Mistake(
        "gn-strided-groups",
        N_("GroupNorm groups made of strided channels"),
        N_("outputs are wrong when 1 < G < C: channel c is put in group c % G instead of group "
           "c // (C / G) (the reshape splits the channel axis in the wrong order)"),
        N_("A group is C / G *contiguous* channels: reshape (N, C, ...) to (N, G, C / G, ...), "
           "with G first, and undo it the same way."),
        {"groupnorm": [(
            (GROUP, "return a.reshape(a.shape[0], -1, self.num_groups, *a.shape[2:])"
                    ".swapaxes(1, 2).reshape(a.shape[0], self.num_groups, -1)"),
            (UNGROUP, "return ag.reshape(shape[0], self.num_groups, -1, *shape[2:])"
                      ".swapaxes(1, 2).reshape(shape)"),
        )]},
        taught=notebook("groupnorm_instancenorm", N_("7 (groups are contiguous)")),
    ),
    Mistake(
        "backward-stats-constant",
        N_("backward without the mean terms (statistics treated as constants)"),
        N_("the forward is right, dgamma and dbeta are right, but dx = rstd * dy * gamma: it "
           "ignores that the mean and the variance (RMS) depend on x (for LayerNorm, BatchNorm and "
           "GroupNorm: dx does not sum to zero over the normalised axes)"),
        N_("The statistics are functions of x: dx gets a term through the mean and one through "
           "the variance (RMS). Differentiate x_hat through all three paths."),
        {
            **same(("batchnorm", "layernorm", "transformer_block"), ((DX, "dx = rstd * dx_hat"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * dx_hat_g"),)],
            "rmsnorm": [((DX_RMS, "dx = rrms * dx_hat"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * dh_hat"),)],
        },
        taught=explain("layernorm", N_("every path from x to y")),
    ),
    Mistake(
        "backward-no-xhat-term",
        N_("backward without the x_hat * mean(dx_hat * x_hat) term"),
        N_("dx sums to zero over the normalised axes but is not orthogonal to x_hat, even up to "
           "eps: the path "
           "through the variance is missing"),
        N_("The variance depends on x too: add the path through the variance. A correct dx is "
           "orthogonal to x_hat over the normalised axes (up to eps); test yours."),
        {
            **same(("batchnorm", "layernorm", "transformer_block"),
                    ((DX, "dx = rstd * (dx_hat - mean_dx_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - mean_dx_hat)"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * (dh_hat - mean_dh_hat)"),)],
        },
        taught=explain("layernorm", N_("the path through the variance")),
    ),
    Mistake(
        "rms-backward-mean-term",
        N_("RMSNorm backward with LayerNorm's mean term"),
        N_("the forward is right but dx sums to zero over the normalised axes, as LayerNorm's "
           "would: the - mean(dx_hat) term was copied from LayerNorm's backward"),
        N_("RMSNorm subtracts no mean, so its backward has no path through a mean: keep only the "
           "direct term and the one through the RMS."),
        {"rmsnorm": [((DX_RMS, "dx = rrms * (dx_hat - dx_hat.mean(axis=axes, keepdims=True) "
                               "- x_hat * mean_dx_hat_x_hat)"),)]},
        taught=explain("rmsnorm", N_("no mean, no mean term")),
    ),
    Mistake(
        "dparam-wrong-reduction",
        N_("dgamma / dbeta reduced over the wrong axes"),
        N_("dx is right but dgamma or dbeta is not: every entry holds the total over all axes, or "
           "the average instead of the sum over the batch"),
        N_("gamma and beta are shared by every position they are broadcast over, so their "
           "gradients are *sums* over exactly those axes (the batch and spatial axes for "
           "BatchNorm/GroupNorm, the leading axes for LayerNorm/RMSNorm), one entry per parameter."),
        {
            **same(("batchnorm", "groupnorm"),
                    ((DGAMMA_AXES, "self.gamma.grad += (dy * x_hat).sum()"),
                     (DBETA_AXES, "self.beta.grad += dy.sum()")),
                    ((DGAMMA_AXES, "self.gamma.grad += (dy * x_hat).mean(axis=axes)"),
                     (DBETA_AXES, "self.beta.grad += dy.mean(axis=axes)")),
                    ((DGAMMA_AXES, "self.gamma.grad += (dy * x_hat).mean(axis=axes)"),)),
            "layernorm": [((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).sum()"),
                           (DBETA_LEAD, "self.beta.grad += dy.sum()")),
                          ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),
                           (DBETA_LEAD, "self.beta.grad += dy.mean(axis=lead)")),
                          ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),)],
            "rmsnorm": [((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).sum()"),),
                        ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),)],
            "mlp_with_batchnorm": [((MLP_DGAMMA, "self.gamma.grad += (dhbn * h_hat).sum()"),
                                    (MLP_DBETA, "self.beta.grad += dhbn.sum()")),
                                   ((MLP_DGAMMA, "self.gamma.grad += (dhbn * h_hat).mean(axis=0)"),
                                    (MLP_DBETA, "self.beta.grad += dhbn.mean(axis=0)"))],
            "transformer_block": [((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).sum()"),
                                   (DBETA_LEAD, "self.beta.grad += dy.sum()")),
                                  ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),
                                   (DBETA_LEAD, "self.beta.grad += dy.mean(axis=lead)"))],
            # DyT: gamma and beta summed over every element, as alpha's gradient is; or averaged
            "dyt": [((DYT_DGAMMA, "self.gamma.grad += (dy * t).sum()"),
                     (DYT_DBETA, "self.beta.grad += dy.sum()")),
                    ((DYT_DGAMMA, "self.gamma.grad += (dy * t).mean(axis=lead)"),
                     (DYT_DBETA, "self.beta.grad += dy.mean(axis=lead)"))],
        },
        taught=notebook("interview_practice", N_("4 (The backward)")),
    ),
    Mistake(
        "grad-assigned",
        N_("parameter gradients assigned instead of accumulated"),
        N_("one backward gives the right parameter gradients (dgamma and dbeta, or the weights' "
           "and biases'), but after two backward calls they hold only the second one's gradient"),
        N_("Gradients accumulate: add into each parameter's .grad (+=) and let the caller zero "
           "them; a parameter used twice must receive both shares."),
        {
            **same(("batchnorm", "groupnorm"),
                    ((DGAMMA_AXES, DGAMMA_AXES.replace("+=", "=")),
                     (DBETA_AXES, DBETA_AXES.replace("+=", "=")))),
            "layernorm": [((DGAMMA_LEAD, DGAMMA_LEAD.replace("+=", "=")),
                           (DBETA_LEAD, DBETA_LEAD.replace("+=", "=")))],
            "rmsnorm": [((DGAMMA_LEAD, DGAMMA_LEAD.replace("+=", "=")),)],
            "attention": [tuple((line, line.replace("+=", "=")) for line in ATT_DW)],
            "qk_norm": [tuple((line, line.replace("+=", "=")) for line in ATT_DW + (QK_DGAMMA,))],
            "mlp_with_batchnorm": [tuple((line, line.replace("+=", "=")) for line in (
                MLP_DW2, MLP_DB2, MLP_DGAMMA, MLP_DBETA, MLP_DW1, MLP_DB1))],
            "transformer_block": [tuple((line, line.replace("+=", "=")) for line in (
                DGAMMA_LEAD, DBETA_LEAD, BLOCK_DW1, BLOCK_DB1, BLOCK_DW2, BLOCK_DB2))],
            "dyt": [tuple((line, line.replace("+=", "=")) for line in (
                DYT_DBETA, DYT_DGAMMA, DYT_DALPHA))],
        },
        taught=notebook("interview_practice", N_("4 (The backward)")),
    ),
    Mistake(
        "bn-eval-batch-stats",
        N_("batch statistics used in evaluation"),
        N_("eval() changes nothing: the output in evaluation is computed from the batch's own "
           "mean and variance, as in training (and the running statistics may keep moving)"),
        N_("In evaluation BatchNorm is a fixed affine map: normalise with running_mean and "
           "running_var, and leave them untouched."),
        {"batchnorm": [
            ((BN_BATCH_STATS, "batch_stats = True"),),
            ((BN_BATCH_STATS, "batch_stats = True"),
             (BN_UPDATE, "if self.track_running_stats:")),
        ],
         "batch_renorm": [((BR_EVAL, "if False:"),)]},  # the training forward, update included
        taught=notebook("batchnorm", N_("7 (Training vs evaluation)")),
    ),
    Mistake(
        "bn-train-running-stats",
        N_("running statistics used in training"),
        N_("training outputs are not standardised (their per-channel mean is not 0): the layer "
           "normalises with running_mean and running_var instead of the batch's statistics"),
        N_("In training BatchNorm normalises with the statistics of the current batch (and only "
           "updates the running averages with them); the running values are for evaluation."),
        {"batchnorm": [
            ((BN_AFTER_UPDATE, "        if self.training:\n"
                               "            mean = self.running_mean.reshape(view)\n"
                               "            var = self.running_var.reshape(view)\n"
                               + BN_AFTER_UPDATE),),
            ((BN_UPDATE,
              "mean_batch, var_batch = mean, var\n"
              "        mean, var = self.running_mean.reshape(view), self.running_var.reshape(view)\n"
              "        if self.training and self.track_running_stats:"),
             (BN_NEW_MEAN, "+ m * mean_batch.ravel()"),
             (BN_NEW_VAR, "+ m * var_batch.ravel()")),
        ]},
        taught=notebook("batchnorm", N_("7 (Training vs evaluation)")),
    ),
    Mistake(
        "bn-eval-squared-var",
        N_("evaluation divides by sqrt(running_var**2 + eps)"),
        N_("training is right and the running statistics are right, but evaluation outputs are "
           "off: running_var is squared as if it were a standard deviation"),
        N_("running_var already is a variance (sigma squared): evaluation divides by "
           "sqrt(running_var + eps)."),
        {"batchnorm": [((BN_EVAL_VAR, "var = self.running_var.reshape(view) ** 2"),)],
         "fold_batchnorm": [((FOLD_SCALE, "gamma / np.sqrt(running_var ** 2 + eps)"),)]},
        taught=notebook("batchnorm", N_("7 (The running variance is a variance)")),
    ),
    Mistake(
        "bn-eval-backward-batch-formula",
        N_("evaluation backward with the training formula"),
        N_("everything is right except dx in evaluation mode: it has the mean and variance terms of "
           "training, as if the running statistics depended on the batch"),
        N_("In evaluation the running statistics are constants, so BatchNorm is an affine map of x "
           "and dx is just the direct term; remember in forward which statistics were used."),
        {"batchnorm": [
            ((BN_EVAL_BACKWARD, "if False:"),),
            # the staged (dvar, dmu) form: with running statistics x_hat is not centred, and
            # dmu's dvar * mean(-2 (x - mu)) term no longer vanishes
            ((BN_EVAL_BACKWARD, "if False:"),
             (DX, "dx = rstd * (dx_hat - mean_dx_hat - (x_hat - x_hat.mean(axis=axes, "
                  "keepdims=True)) * mean_dx_hat_x_hat)")),
        ]},
        taught=notebook("batchnorm", N_("7 (Training vs evaluation)")),
    ),
    Mistake(
        "rms-subtracts-mean",
        N_("RMSNorm that subtracts the mean"),
        N_("outputs have zero mean over the normalised axes, as LayerNorm's would: the input was "
           "centred before the root mean square was taken"),
        N_("RMSNorm only rescales: y = x / sqrt(mean(x**2) + eps) * gamma, no centring (and no "
           "beta). That is the point of it: one statistic, not two."),
        {"rmsnorm": [((MEAN_SQUARE, "x = x - x.mean(axis=axes, keepdims=True)\n        " + MEAN_SQUARE),)]},
        taught=notebook("rmsnorm", N_("1 (Intuition: scale without centring)")),
    ),
    Mistake(
        "rms-wrong-normaliser",
        N_("RMSNorm with a wrong normaliser"),
        N_("outputs are too small by a constant factor per row: the squares were summed instead of "
           "averaged, or divided by n - 1 (for eps added to the RMS see eps-outside-sqrt)"),
        N_("The root mean square is sqrt(sum(x**2) / n) with n the number of normalised values; "
           "then eps goes inside that square root."),
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True)"),),
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) "
                           "/ (np.prod([x.shape[a] for a in axes]) - 1)"),),
            # the sum, with the backward derived for it: the RMS term grows by D
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True)"),
             (DX_RMS, "dx = rrms * (dx_hat - x_hat * mean_dx_hat_x_hat "
                      "* np.prod([x_hat.shape[a] for a in axes]))")),
        ]},
        taught=notebook("rmsnorm", N_("7 (The normaliser is the number of features)")),
    ),
    Mistake(
        "backward-no-mean-term",
        N_("backward without the - mean(dx_hat) term"),
        N_("dx is orthogonal to x_hat over the normalised axes (up to eps) but does not sum to "
           "zero: the path "
           "through the mean is missing (dx = rstd * (dx_hat - x_hat * mean(dx_hat * x_hat)), "
           "RMSNorm's backward, or the staged form without its dmu / n term)"),
        N_("The mean depends on x too: every x_i moves the mean, so dx gets - mean(dx_hat) "
           "(times rstd). A correct dx sums to zero over the normalised axes; test yours."),
        {
            **same(("batchnorm", "layernorm", "transformer_block"),
                    ((DX, "dx = rstd * (dx_hat - x_hat * mean_dx_hat_x_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - x_hat_g * mean_dx_hat_x_hat)"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * (dh_hat - h_hat * mean_dh_hat_h_hat)"),)],
        },
        taught=explain("layernorm", N_("the path through the mean")),
    ),
    Mistake(
        "bn-stats-per-position",
        N_("BatchNorm statistics per position, over the batch axis only"),
        N_("right for (N, C) input, wrong for (N, C, L): each (channel, position) pair is "
           "standardised over N alone (x.mean(0) on a (B, T, D) input) instead of each channel "
           "over N and L together"),
        N_("BatchNorm1d keeps one mean and one variance per channel: reduce over every axis but "
           "the channel axis, the batch *and* the length (axes (0, 2) of (N, C, L))."),
        {"batchnorm": [
            ((BN_MEAN, "mean = x.mean(axis=0, keepdims=True)"),
             (VAR, "var = ((x - mean) ** 2).mean(axis=0, keepdims=True)"),
             (BN_RUNNING_MEAN, "(1 - m) * self.running_mean + m * mean.mean(axis=axes).ravel()"),
             (BN_RUNNING_VAR, "(1 - m) * self.running_var + m * var.mean(axis=axes).ravel()")),
            ((BN_MEAN, "mean = x.mean(axis=0, keepdims=True)"),
             (VAR, "var = ((x - mean) ** 2).mean(axis=0, keepdims=True)"),
             (BN_RUNNING_MEAN, "(1 - m) * self.running_mean + m * mean.mean(axis=axes).ravel()"),
             (BN_RUNNING_VAR, "(1 - m) * self.running_var + m * var.mean(axis=axes).ravel()"),
             (BN_MEAN_DX_HAT, "mean_dx_hat = dx_hat.mean(axis=0, keepdims=True)"),
             (BN_MEAN_DX_HAT_X_HAT, "mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=0, keepdims=True)")),
            # the running variance made unbiased per position (N values), then averaged
            ((BN_MEAN, "mean = x.mean(axis=0, keepdims=True)"),
             (VAR, "var = ((x - mean) ** 2).mean(axis=0, keepdims=True)"),
             (BN_RUNNING_MEAN, "(1 - m) * self.running_mean + m * mean.mean(axis=axes).ravel()"),
             (BN_UNBIASED, "(var * len(x) / (len(x) - 1)).mean(axis=axes).ravel()"),
             (BN_MEAN_DX_HAT, "mean_dx_hat = dx_hat.mean(axis=0, keepdims=True)"),
             (BN_MEAN_DX_HAT_X_HAT, "mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=0, keepdims=True)")),
        ]},
        taught=notebook("batchnorm", N_("1 (Intuition) and 2 (The formulas)")),
    ),
    Mistake(
        "rms-batch-size-normaliser",
        N_("RMSNorm mean square divided by the batch size"),
        N_("outputs are off by a factor per row that changes with the batch size: the squares "
           "were summed over the features and divided by b, the number of rows, instead of d, "
           "the number of features"),
        N_("The mean square of a row is sum(x**2) / d over its own d normalised values; the "
           "batch size has nothing to do with it."),
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) / x.shape[0]"),),
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) / x.shape[0]"),
             (DX_RMS, "dx = rrms * (dx_hat - x_hat * (dx_hat * x_hat).sum(axis=axes, "
                      "keepdims=True) / dy.shape[0])")),
        ]},
        taught=notebook("rmsnorm", N_("7 (The normaliser is the number of features)")),
    ),
    Mistake(
        "rms-over-whole-tensor",
        N_("one RMS over the whole input"),
        N_("a single sample is right, a batch is not: every row is divided by the same number, "
           "the RMS of the whole (batch, features) array, so rows keep their relative sizes"),
        N_("RMSNorm takes one root mean square per sample (per token): reduce over the "
           "normalised axes only, with keepdims, never over the batch."),
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).mean(keepdims=True)"),),
            ((MEAN_SQUARE, "ms = (x ** 2).mean(keepdims=True)"),
             (DX_RMS, "dx = rrms * (dx_hat - x_hat * (dx_hat * x_hat).mean(keepdims=True))")),
        ]},
        taught=notebook("rmsnorm", N_("7 (One RMS per sample, not per batch)")),
    ),
    Mistake(
        "bn-momentum-none-unsupported",
        N_("momentum=None (the cumulative average) not handled"),
        N_("the layer built with momentum=None raises a TypeError at its first training step: "
           "the running update computes (1 - self.momentum) with momentum None, where None asks "
           "for the plain average of every batch so far"),
        N_("momentum=None means the running statistics are the cumulative average: count the "
           "batches and use m = 1 / num_batches_tracked as the weight of the new batch; any "
           "other momentum is used as given."),
        same(RUNNING, ((BN_MOMENTUM, "self.momentum"),)),
        taught=solution("batchnorm"),
    ),
    Mistake(
        "bn-running-never-updated",
        N_("running statistics never updated in training"),
        N_("running_mean stays 0 and running_var stays 1 however many batches go through, so "
           "evaluation normalises with the initial values (the update went into local "
           "variables, not into the layer's attributes); BatchNorm's training outputs and "
           "gradients are right, Batch Renorm's only at the first step (its r and d read the "
           "running statistics)"),
        N_("Each training forward blends the batch's statistics into the layer's own "
           "self.running_mean and self.running_var (assign the attributes, not a local copy); "
           "evaluation then uses them."),
        same(RUNNING, ((BN_SET_MEAN, "running_mean = "), (BN_SET_VAR, "running_var = "))),
        taught=notebook("batchnorm", N_("7 (Training vs evaluation)")),
    ),
    Mistake(
        "bn-running-init-first-batch",
        N_("running statistics set to the first batch's statistics"),
        N_("after the first training step running_mean and running_var are that batch's own "
           "statistics instead of 0.9 * (0, 1) + 0.1 * batch; the later steps blend as they "
           "should, so the error fades by 0.9 each step but evaluation after a few steps is off"),
        N_("The running statistics start at mean 0 and variance 1 and every step, the first one "
           "included, blends: running = (1 - momentum) * running + momentum * batch (with the "
           "unbiased variance). Only momentum=None gives the first batch a weight of 1."),
        same(RUNNING,
             ((BN_M, "m = 1.0 if self.num_batches_tracked == 1 else "),),
             # the first batch's biased variance copied as it is
             ((BN_M, "m = 1.0 if self.num_batches_tracked == 1 else "),
              (BN_UNBIASED, "var.ravel() * (n / (n - 1) if self.num_batches_tracked > 1 else 1.0)"))),
        taught=notebook("batchnorm", N_("7 (Momentum: which side does it weight?)")),
    ),
    Mistake(
        "bn-eval-no-affine",
        N_("evaluation without gamma and beta"),
        N_("training is right and so are the running statistics; the evaluation output is not: it "
           "is (x - running_mean) / sqrt(running_var + eps) alone, the normalised x without "
           "gamma's scale and beta's shift"),
        N_("Evaluation changes only which statistics normalise x; the affine part stays: "
           "y = gamma * (x - running_mean) / sqrt(running_var + eps) + beta, as in training."),
        {"batchnorm": [((BN_AFFINE, "if self.gamma is not None and batch_stats:"),)]},
        taught=notebook("batchnorm", N_("7 (Training vs evaluation)")),
    ),
    Mistake(
        "bn-backward-count-n",
        N_("BatchNorm backward divides by N instead of N * L"),
        N_("right for (N, C) input, dx wrong for (N, C, L): the backward's means over the "
           "channel's values were sums divided by N, the batch size, where each channel has "
           "N * L values; the forward, dgamma and dbeta are right"),
        N_("Every mean in the backward runs over the same values as the forward's statistics: "
           "all n = N * L values of a channel (axes 0 and 2), so divide the sums by n, or take "
           ".mean over those axes."),
        {"batchnorm": [(
            (BN_MEAN_DX_HAT, "mean_dx_hat = dx_hat.sum(axis=axes, keepdims=True) / len(dy)"),
            (BN_MEAN_DX_HAT_X_HAT,
             "mean_dx_hat_x_hat = (dx_hat * x_hat).sum(axis=axes, keepdims=True) / len(dy)"),
        )]},
        taught=notebook("batchnorm", N_("4 (The backward, derived step by step)")),
    ),
    Mistake(
        "gn-stats-per-position",
        N_("GroupNorm statistics per position, over the group's channels only"),
        N_("right for (N, C) input, wrong with spatial axes: each position of each group is "
           "standardised over the group's C / G channels at that position alone, instead of over "
           "the group's channels and every position together (with one channel per group the "
           "output is beta)"),
        N_("A group's statistics run over its C / G channels AND all their spatial positions: "
           "reshape (N, C, *spatial) to (N, G, C / G * spatial) and reduce the last axis."),
        {"groupnorm": [(
            (GROUP, "return a.reshape(a.shape[0], self.num_groups, a.shape[1] // self.num_groups, "
                    "-1).swapaxes(2, 3).reshape(a.shape[0], -1, a.shape[1] // self.num_groups)"),
            (UNGROUP, "return ag.reshape(shape[0], self.num_groups, -1, shape[1] // "
                      "self.num_groups).swapaxes(2, 3).reshape(shape)"),
        )]},
        taught=notebook("groupnorm_instancenorm", N_("1 (Intuition: subjects in groups)")),
    ),
    Mistake(
        "rms-backward-missing-rrms",
        N_("RMSNorm backward: the x_hat term not multiplied by 1 / rms"),
        N_("the forward and dgamma are right, dx is not: dx = rrms * dx_hat - x_hat * "
           "mean(dx_hat * x_hat), the 1 / rms factor applied to the first term only (a "
           "parenthesis in the wrong place)"),
        N_("Both terms come through x_hat = x / rms, so both carry 1 / rms: "
           "dx = rrms * (dx_hat - x_hat * mean(dx_hat * x_hat)) over the normalised axes."),
        {"rmsnorm": [((DX_RMS, "dx = rrms * dx_hat - x_hat * mean_dx_hat_x_hat"),)],
         "qk_norm": [((QK_DNORM, "return rrms * dt_hat - t_hat * mean_dt_hat_t_hat"),)]},
        taught=explain("rmsnorm", N_("the path through the RMS")),
    ),
]
