"""The catalog of mistakes people make when they hand-write a norm layer, Dropout, Softmax or
cross-entropy.

Each ``Mistake`` has an id, a title, the symptom it produces and a hint toward the fix (not
the code). Its *signature* is a mutant: the reference answer in ``solutions/`` with exactly
that mistake, made by replacing one or two lines of the answer's source (``variants``; a
mistake may be written in more than one way). The grader runs every mutant on the same
checks as the user's layer and names the mistake whose numbers the user's numbers match. It
never reads the user's source, so the same mistake written in another style (a staged
backward, loops) gets the same name; where styles give different numbers (BatchNorm's
staged backward in evaluation), the mistake has one variant per style. ``taught_in`` says
where normcore teaches the right way: a notebook section or ``normcore explain``.
"""

from dataclasses import dataclass, field

# The lines of the reference answers that the mutants replace, named once here.
# Mutants replace the smallest piece they can, so that two mistakes can be combined.
BN_RUNNING_MEAN = "(1 - m) * self.running_mean + m * mean.ravel()"
BN_RUNNING_VAR = "(1 - m) * self.running_var + m * var.ravel()"
BN_UNBIASED = "var.ravel() * n / (n - 1)"
BN_AFTER_UPDATE = "        rstd = "  # the first line after the running update
BN_EVAL_VAR = "var = self.running_var.reshape(view)"
VAR = "var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)"
VAR_GROUPED = "var = ((xg - mean) ** 2).mean(axis=-1, keepdims=True)"
RSTD = "np.sqrt(var + self.eps)"
RRMS = "np.sqrt(ms + eps)"
MEAN_SQUARE = "ms = (x ** 2).mean(axis=axes, keepdims=True)"
AXES_TRAILING = "axes = tuple(range(-len(self.normalized_shape), 0))"
DX = "dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)"
DX_GROUPED = "dx = rstd * (dx_hat_g - mean_dx_hat - x_hat_g * mean_dx_hat_x_hat)"
DX_RMS = "dx = rrms * (dx_hat - x_hat * mean_dx_hat_x_hat)"
BN_MEAN = "mean = x.mean(axis=axes, keepdims=True)"
BN_MEAN_DX_HAT = "mean_dx_hat = dx_hat.mean(axis=axes, keepdims=True)"
BN_MEAN_DX_HAT_X_HAT = "mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=axes, keepdims=True)"
DGAMMA_AXES = "self.gamma.grad += (dy * x_hat).sum(axis=axes)"
DBETA_AXES = "self.beta.grad += dy.sum(axis=axes)"
DGAMMA_LEAD = "self.gamma.grad += (dy * x_hat).sum(axis=lead)"
DBETA_LEAD = "self.beta.grad += dy.sum(axis=lead)"
GROUP = "return a.reshape(a.shape[0], self.num_groups, -1)"
UNGROUP = "return ag.reshape(shape)"
DROP_SCALE = "scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)"
DROP_KEEP = "keep = self.rng.random(x.shape) >= self.p"
DROP_EVAL = "if not self.training or self.p == 0.0:"
DROP_EVAL_RETURN = "self.mask = None\n            return x\n"
DROP_BACKWARD = "return (dy * self.mask).astype(dy.dtype)"
SM_AXIS = "self.axis = axis"
SM_SHIFT = "z = x - x.max(axis=a, keepdims=True)"
SM_DX = "dx = y * (dy - (dy * y).sum(axis=a, keepdims=True))"
CE_LOGP = "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))"
CE_LOSS = "loss = -logp[rows, self.targets].mean()"
CE_DLOGITS = "dlogits = dloss * (self.p - onehot) / n"

NORMS = ("batchnorm", "layernorm", "rmsnorm", "groupnorm")
MEAN_VAR_NORMS = ("batchnorm", "layernorm", "groupnorm")


@dataclass(frozen=True)
class Mistake:
    """A catalogued mistake: what it is, what it does to the numbers, and where to look.

    ``variants`` maps an exercise name to a list of variants; a variant is a tuple of
    ``(line in the reference answer, what the mistake writes instead)`` replacements.
    """

    id: str
    title: str
    symptom: str
    hint: str
    variants: dict = field(default_factory=dict)

    @property
    def exercises(self):
        return tuple(self.variants)

    @property
    def taught_in(self):
        """Where normcore teaches the right way: a notebook section or ``normcore explain``."""
        return TAUGHT_IN[self.id]


def _same(exercises, *variants):
    """The same variants for several exercises."""
    return {name: list(variants) for name in exercises}


CATALOG = [
    Mistake(
        "bn-momentum-flipped",
        "momentum weights the old running value instead of the new batch",
        "the running statistics follow the latest batch almost entirely: after one step they "
        "are 0.1 * initial + 0.9 * batch instead of 0.9 * initial + 0.1 * batch (the 'decay' "
        "convention, where 0.9 weights the old value, written with PyTorch's momentum=0.1), so "
        "evaluation depends mostly on the last training batch",
        "In PyTorch's convention momentum is the weight of the *new* batch statistic: with "
        "momentum=0.1 the running value keeps 90% of itself and takes 10% of the batch.",
        {"batchnorm": [(
            (BN_RUNNING_MEAN, "m * self.running_mean + (1 - m) * mean.ravel()"),
            (BN_RUNNING_VAR, "m * self.running_var + (1 - m) * var.ravel()"),
        )]},
    ),
    Mistake(
        "bn-running-var-biased",
        "biased variance in the running_var update",
        "running_mean is right but running_var is too small by the factor (n - 1) / n, n being "
        "the number of values per channel in the batch (N, or N * L)",
        "The running variance estimates the population variance, so it takes the unbiased "
        "batch variance (divide by n - 1), even though the normalisation itself uses the "
        "biased one.",
        {"batchnorm": [(
            (BN_UNBIASED, "var.ravel()"),
        )]},
    ),
    Mistake(
        "var-unbiased-in-normalization",
        "unbiased variance (divide by n - 1) used to normalise",
        "outputs are a little too small in magnitude (by about sqrt((n - 1) / n)), strongly so "
        "for small n such as a batch of 2",
        "Normalise with the biased variance, the mean of the squared deviations (divide by n). "
        "The unbiased n / (n - 1) correction belongs only in BatchNorm's running_var update.",
        {
            **_same(("layernorm",), ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),)),
            "batchnorm": [
                ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),
                 (BN_UNBIASED, "var.ravel()")),
                ((VAR, "var = x.var(axis=axes, ddof=1, keepdims=True)"),),
            ],
            "groupnorm": [((VAR_GROUPED, "var = xg.var(axis=-1, ddof=1, keepdims=True)"),)],
        },
    ),
    Mistake(
        "eps-outside-sqrt",
        "eps added outside the square root",
        "outputs differ slightly for ordinary inputs and a lot when the variance (or mean "
        "square) is comparable to eps; a constant row's input gradient is scaled by 1/eps "
        "instead of 1/sqrt(eps)",
        "eps goes inside: divide by sqrt(var + eps), not by sqrt(var) + eps (for RMSNorm, "
        "sqrt(mean(x**2) + eps), not RMS + eps).",
        {
            **_same(MEAN_VAR_NORMS, ((RSTD, "(np.sqrt(var) + self.eps)"),)),
            "rmsnorm": [((RRMS, "(np.sqrt(ms) + eps)"),)],
        },
    ),
    Mistake(
        "stats-over-too-few-axes",
        "statistics over too few axes",
        "correct while the normalised part is a single axis, wrong as soon as it has several: "
        "a LayerNorm/RMSNorm with a multi-axis normalized_shape that only normalises the last "
        "axis, or a GroupNorm that normalises each channel on its own (InstanceNorm)",
        "Reduce over every normalised axis at once: the last len(normalized_shape) axes, or "
        "for GroupNorm all channels of the group together with their spatial positions.",
        {
            **_same(("layernorm", "rmsnorm"), ((AXES_TRAILING, "axes = (-1,)"),)),
            "groupnorm": [((GROUP, "return a.reshape(a.shape[0], a.shape[1], -1)"),)],
        },
    ),
    Mistake(
        "ln-over-batch",
        "LayerNorm statistics taken over the batch",
        "each feature is standardised across the samples (BatchNorm's axes) instead of each "
        "sample across its features; a single sample comes out as beta",
        "LayerNorm normalises each sample on its own: the mean and variance run over the "
        "feature axes (the last ones), one pair of statistics per sample or token.",
        {"layernorm": [((AXES_TRAILING, "axes = (0,)"),)]},
    ),
    Mistake(
        "gn-strided-groups",
        "GroupNorm groups made of strided channels",
        "outputs are wrong when 1 < G < C: channel c is put in group c % G instead of group "
        "c // (C / G) (the reshape splits the channel axis in the wrong order)",
        "A group is C / G *contiguous* channels: reshape (N, C, ...) to (N, G, C / G, ...), "
        "with G first, and undo it the same way.",
        {"groupnorm": [(
            (GROUP, "return a.reshape(a.shape[0], -1, self.num_groups, *a.shape[2:])"
                    ".swapaxes(1, 2).reshape(a.shape[0], self.num_groups, -1)"),
            (UNGROUP, "return ag.reshape(shape[0], self.num_groups, -1, *shape[2:])"
                      ".swapaxes(1, 2).reshape(shape)"),
        )]},
    ),
    Mistake(
        "backward-stats-constant",
        "backward without the mean terms (statistics treated as constants)",
        "the forward is right, dgamma and dbeta are right, but dx = rstd * dy * gamma: it "
        "ignores that the mean and the variance (RMS) depend on x (for LayerNorm, BatchNorm and "
        "GroupNorm: dx does not sum to zero over the normalised axes)",
        "The statistics are functions of x: dx gets a term through the mean and one through "
        "the variance (RMS). Differentiate x_hat through all three paths.",
        {
            **_same(("batchnorm", "layernorm"), ((DX, "dx = rstd * dx_hat"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * dx_hat_g"),)],
            "rmsnorm": [((DX_RMS, "dx = rrms * dx_hat"),)],
        },
    ),
    Mistake(
        "backward-no-xhat-term",
        "backward without the x_hat * mean(dx_hat * x_hat) term",
        "dx sums to zero over the normalised axes but is not orthogonal to x_hat, even up to "
        "eps: the path "
        "through the variance is missing",
        "The variance depends on x too: add the path through the variance. A correct dx is "
        "orthogonal to x_hat over the normalised axes (up to eps); test yours.",
        {
            **_same(("batchnorm", "layernorm"), ((DX, "dx = rstd * (dx_hat - mean_dx_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - mean_dx_hat)"),)],
        },
    ),
    Mistake(
        "rms-backward-mean-term",
        "RMSNorm backward with LayerNorm's mean term",
        "the forward is right but dx sums to zero over the normalised axes, as LayerNorm's "
        "would: the - mean(dx_hat) term was copied from LayerNorm's backward",
        "RMSNorm subtracts no mean, so its backward has no path through a mean: keep only the "
        "direct term and the one through the RMS.",
        {"rmsnorm": [((DX_RMS, "dx = rrms * (dx_hat - dx_hat.mean(axis=axes, keepdims=True) "
                               "- x_hat * mean_dx_hat_x_hat)"),)]},
    ),
    Mistake(
        "dparam-wrong-reduction",
        "dgamma / dbeta reduced over the wrong axes",
        "dx is right but dgamma or dbeta is not: every entry holds the total over all axes, or "
        "the average instead of the sum over the batch",
        "gamma and beta are shared by every position they are broadcast over, so their "
        "gradients are *sums* over exactly those axes (the batch and spatial axes for "
        "BatchNorm/GroupNorm, the leading axes for LayerNorm/RMSNorm), one entry per parameter.",
        {
            **_same(("batchnorm", "groupnorm"),
                    ((DGAMMA_AXES, "self.gamma.grad += (dy * x_hat).sum()"),
                     (DBETA_AXES, "self.beta.grad += dy.sum()")),
                    ((DGAMMA_AXES, "self.gamma.grad += (dy * x_hat).mean(axis=axes)"),
                     (DBETA_AXES, "self.beta.grad += dy.mean(axis=axes)"))),
            "layernorm": [((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).sum()"),
                           (DBETA_LEAD, "self.beta.grad += dy.sum()")),
                          ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),
                           (DBETA_LEAD, "self.beta.grad += dy.mean(axis=lead)"))],
            "rmsnorm": [((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).sum()"),),
                        ((DGAMMA_LEAD, "self.gamma.grad += (dy * x_hat).mean(axis=lead)"),)],
        },
    ),
    Mistake(
        "grad-assigned",
        "parameter gradients assigned instead of accumulated",
        "one backward gives the right dgamma and dbeta, but after two backward calls they hold "
        "only the second one's gradient",
        "Gradients accumulate: add into gamma.grad and beta.grad (+=) and let the caller zero "
        "them; a parameter used twice must receive both shares.",
        {
            **_same(("batchnorm", "groupnorm"),
                    ((DGAMMA_AXES, DGAMMA_AXES.replace("+=", "=")),
                     (DBETA_AXES, DBETA_AXES.replace("+=", "=")))),
            "layernorm": [((DGAMMA_LEAD, DGAMMA_LEAD.replace("+=", "=")),
                           (DBETA_LEAD, DBETA_LEAD.replace("+=", "=")))],
            "rmsnorm": [((DGAMMA_LEAD, DGAMMA_LEAD.replace("+=", "=")),)],
        },
    ),
    Mistake(
        "bn-eval-batch-stats",
        "batch statistics used in evaluation",
        "eval() changes nothing: the output in evaluation is standardised with the batch's own "
        "mean and variance (and the running statistics may keep moving)",
        "In evaluation BatchNorm is a fixed affine map: normalise with running_mean and "
        "running_var, and leave them untouched.",
        {"batchnorm": [
            (("batch_stats = self.training or not self.track_running_stats", "batch_stats = True"),),
            (("batch_stats = self.training or not self.track_running_stats", "batch_stats = True"),
             ("if self.training and self.track_running_stats:", "if self.track_running_stats:")),
        ]},
    ),
    Mistake(
        "bn-train-running-stats",
        "running statistics used in training",
        "training outputs are not standardised (their per-channel mean is not 0): the layer "
        "normalises with running_mean and running_var instead of the batch's statistics",
        "In training BatchNorm normalises with the statistics of the current batch (and only "
        "updates the running averages with them); the running values are for evaluation.",
        {"batchnorm": [
            ((BN_AFTER_UPDATE, "        if self.training:\n"
                               "            mean = self.running_mean.reshape(view)\n"
                               "            var = self.running_var.reshape(view)\n"
                               + BN_AFTER_UPDATE),),
            (("if self.training and self.track_running_stats:",
              "mean_batch, var_batch = mean, var\n"
              "        mean, var = self.running_mean.reshape(view), self.running_var.reshape(view)\n"
              "        if self.training and self.track_running_stats:"),
             ("+ m * mean.ravel()", "+ m * mean_batch.ravel()"),
             ("+ m * var.ravel()", "+ m * var_batch.ravel()")),
        ]},
    ),
    Mistake(
        "bn-eval-squared-var",
        "evaluation divides by sqrt(running_var**2 + eps)",
        "training is right and the running statistics are right, but evaluation outputs are "
        "off: running_var is squared as if it were a standard deviation",
        "running_var already is a variance (sigma squared): evaluation divides by "
        "sqrt(running_var + eps).",
        {"batchnorm": [((BN_EVAL_VAR, "var = self.running_var.reshape(view) ** 2"),)]},
    ),
    Mistake(
        "bn-eval-backward-batch-formula",
        "evaluation backward with the training formula",
        "everything is right except dx in evaluation mode: it has the mean and variance terms of "
        "training, as if the running statistics depended on the batch",
        "In evaluation the running statistics are constants, so BatchNorm is an affine map of x "
        "and dx is just the direct term; remember in forward which statistics were used.",
        {"batchnorm": [
            (("if not batch_stats:", "if False:"),),
            # the staged (dvar, dmu) form: with running statistics x_hat is not centred, and
            # dmu's dvar * mean(-2 (x - mu)) term no longer vanishes
            (("if not batch_stats:", "if False:"),
             (DX, "dx = rstd * (dx_hat - mean_dx_hat - (x_hat - x_hat.mean(axis=axes, "
                  "keepdims=True)) * mean_dx_hat_x_hat)")),
        ]},
    ),
    Mistake(
        "rms-subtracts-mean",
        "RMSNorm that subtracts the mean",
        "outputs have zero mean over the normalised axes, as LayerNorm's would: the input was "
        "centred before the root mean square was taken",
        "RMSNorm only rescales: y = x / sqrt(mean(x**2) + eps) * gamma, no centring (and no "
        "beta). That is the point of it: one statistic, not two.",
        {"rmsnorm": [((MEAN_SQUARE, "x = x - x.mean(axis=axes, keepdims=True)\n        " + MEAN_SQUARE),)]},
    ),
    Mistake(
        "rms-wrong-normaliser",
        "RMSNorm with a wrong normaliser",
        "outputs are too small by a constant factor per row: the squares were summed instead of "
        "averaged, or divided by n - 1 (for eps added to the RMS see eps-outside-sqrt)",
        "The root mean square is sqrt(sum(x**2) / n) with n the number of normalised values; "
        "then eps goes inside that square root.",
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True)"),),
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) "
                           "/ (np.prod([x.shape[a] for a in axes]) - 1)"),),
        ]},
    ),
    Mistake(
        "dropout-no-scale",
        "Dropout without the 1 / (1 - p) scale",
        "kept units pass through unchanged in training, so the expected activation shrinks to "
        "(1 - p) * x in training while evaluation returns x",
        "Inverted dropout scales the kept units by 1 / (1 - p) in training (forward and "
        "backward), so that the expected output equals the input and evaluation needs nothing.",
        {"dropout": [((DROP_SCALE, "scale = 1.0"),)]},
    ),
    Mistake(
        "dropout-eval-scaling",
        "Dropout that scales at evaluation time",
        "evaluation is not the identity: the output is multiplied by (1 - p) (the old, "
        "non-inverted convention) or by 1 / (1 - p)",
        "With inverted dropout all the scaling happens in training; in evaluation the layer "
        "returns its input unchanged.",
        {"dropout": [
            ((DROP_EVAL_RETURN, "self.mask = None\n            return x * (1.0 - self.p)\n"),),
            ((DROP_EVAL_RETURN, "self.mask = None\n            return x / (1.0 - self.p)\n"),),
        ]},
    ),
    Mistake(
        "dropout-active-in-eval",
        "Dropout still dropping in evaluation",
        "eval() changes nothing: units are still zeroed (and the kept ones scaled) at "
        "evaluation time, so predictions are random",
        "Check the mode: in evaluation (training flag off) Dropout returns its input.",
        {"dropout": [((DROP_EVAL, "if self.p == 0.0:"),)]},
    ),
    Mistake(
        "dropout-fresh-mask",
        "Dropout backward draws a fresh mask",
        "the forward is right, but the units whose gradient is zeroed are not the units that "
        "were dropped: about 2p(1 - p) of the positions disagree",
        "The backward must reuse the mask of the forward pass: cache it in forward, and use the "
        "cached mask (with the same scale) in backward.",
        {"dropout": [((DROP_BACKWARD, "return (dy * (self.rng.random(dy.shape) >= self.p) / (1.0 - self.p))"
                                      ".astype(dy.dtype)"),)]},
    ),
    Mistake(
        "dropout-p-is-keep",
        "p taken as the keep probability",
        "the fraction of zeroed units is 1 - p instead of p (the units are kept with "
        "probability p, and the kept ones scaled by 1 / p or by 1 / (1 - p))",
        "In Dropout(p) (PyTorch's convention) p is the probability of *dropping* a unit; each "
        "unit is kept with probability 1 - p.",
        {"dropout": [
            ((DROP_KEEP, "keep = self.rng.random(x.shape) < self.p"),
             (DROP_SCALE, "scale = 1.0 / self.p")),
            ((DROP_KEEP, "keep = self.rng.random(x.shape) < self.p"),),
        ]},
    ),
    Mistake(
        "backward-no-mean-term",
        "backward without the - mean(dx_hat) term",
        "dx is orthogonal to x_hat over the normalised axes (up to eps) but does not sum to "
        "zero: the path "
        "through the mean is missing (dx = rstd * (dx_hat - x_hat * mean(dx_hat * x_hat)), "
        "RMSNorm's backward, or the staged form without its dmu / n term)",
        "The mean depends on x too: every x_i moves the mean, so dx gets - mean(dx_hat) "
        "(times rstd). A correct dx sums to zero over the normalised axes; test yours.",
        {
            **_same(("batchnorm", "layernorm"),
                    ((DX, "dx = rstd * (dx_hat - x_hat * mean_dx_hat_x_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - x_hat_g * mean_dx_hat_x_hat)"),)],
        },
    ),
    Mistake(
        "bn-stats-per-position",
        "BatchNorm statistics per position, over the batch axis only",
        "right for (N, C) input, wrong for (N, C, L): each (channel, position) pair is "
        "standardised over N alone (x.mean(0) on a (B, T, D) input) instead of each channel "
        "over N and L together",
        "BatchNorm1d keeps one mean and one variance per channel: reduce over every axis but "
        "the channel axis, the batch *and* the length (axes (0, 2) of (N, C, L)).",
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
        ]},
    ),
    Mistake(
        "rms-batch-size-normaliser",
        "RMSNorm mean square divided by the batch size",
        "outputs are off by a factor per row that changes with the batch size: the squares "
        "were summed over the features and divided by b, the number of rows, instead of d, "
        "the number of features",
        "The mean square of a row is sum(x**2) / d over its own d normalised values; the "
        "batch size has nothing to do with it.",
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) / x.shape[0]"),),
            ((MEAN_SQUARE, "ms = (x ** 2).sum(axis=axes, keepdims=True) / x.shape[0]"),
             (DX_RMS, "dx = rrms * (dx_hat - x_hat * (dx_hat * x_hat).sum(axis=axes, "
                      "keepdims=True) / dy.shape[0])")),
        ]},
    ),
    Mistake(
        "rms-over-whole-tensor",
        "one RMS over the whole input",
        "a single sample is right, a batch is not: every row is divided by the same number, "
        "the RMS of the whole (batch, features) array, so rows keep their relative sizes",
        "RMSNorm takes one root mean square per sample (per token): reduce over the "
        "normalised axes only, with keepdims, never over the batch.",
        {"rmsnorm": [
            ((MEAN_SQUARE, "ms = (x ** 2).mean(keepdims=True)"),),
            ((MEAN_SQUARE, "ms = (x ** 2).mean(keepdims=True)"),
             (DX_RMS, "dx = rrms * (dx_hat - x_hat * (dx_hat * x_hat).mean(keepdims=True))")),
        ]},
    ),
    Mistake(
        "dropout-scale-1-over-p",
        "Dropout kept units scaled by 1 / p",
        "the right fraction of units is dropped, but the kept ones are scaled by 1 / p instead "
        "of 1 / (1 - p), so the expected output is (1 - p) / p times the input",
        "The kept units are the fraction 1 - p, so inverted dropout divides them by 1 - p (the "
        "keep probability), not by p.",
        {"dropout": [((DROP_SCALE, "scale = 0.0 if self.p == 1.0 else 1.0 / self.p"),),
                     ((DROP_SCALE, "scale = 1.0 / self.p"),)]},
    ),
    Mistake(
        "dropout-backward-no-scale",
        "Dropout backward without the 1 / (1 - p) scale",
        "the forward is right and the right units get a zero gradient, but the kept gradients "
        "pass through unscaled: the backward multiplies by the 0/1 mask only",
        "y = x * mask / (1 - p), so dy/dx = mask / (1 - p): the backward applies the same mask "
        "*and* the same scale as the forward (cache the scaled mask once).",
        {"dropout": [((DROP_BACKWARD, "return (dy * (self.mask != 0)).astype(dy.dtype)"),)]},
    ),
    Mistake(
        "softmax-no-max-shift",
        "softmax without subtracting the max",
        "right for ordinary logits, nan (or inf) for large ones: exp(1000) overflows to inf "
        "and inf / inf is nan (in float32 already exp(89) overflows)",
        "Softmax is shift invariant: compute exp(x - max(x)) over the axis, so the largest "
        "exponent is exp(0) = 1 and nothing can overflow.",
        {"softmax": [((SM_SHIFT, "z = x"),)]},
    ),
    Mistake(
        "softmax-diagonal-jacobian",
        "softmax backward with the diagonal of the Jacobian only",
        "the forward is right, dx is not: dx = dy * y * (1 - y), as if each y_i depended on "
        "x_i alone (a sigmoid's derivative); the correct dx sums to zero along the axis, "
        "this one does not",
        "Every y_i depends on every x_j of its slice: dy_i/dx_j = y_i ([i == j] - y_j). "
        "Applied to dy that is dx = y * (dy - sum(dy * y)) along the axis.",
        {"softmax": [((SM_DX, "dx = dy * y * (1 - y)"),)]},
    ),
    Mistake(
        "softmax-wrong-axis",
        "softmax along the wrong axis",
        "right when the axis is the last one, wrong for any other: the slices that sum to 1 "
        "are the last axis's (or the first axis's), not those of the axis asked for",
        "Take the max, the exponentials' sum and, in the backward, sum(dy * y) along "
        "self.axis, with keepdims=True so they broadcast back.",
        {"softmax": [((SM_AXIS, "self.axis = -1"),), ((SM_AXIS, "self.axis = 0"),)]},
    ),
    Mistake(
        "ce-summed-not-averaged",
        "cross-entropy summed over the batch instead of averaged",
        "right for one sample, N times too large for N samples: the loss, or dlogits, or "
        "both, miss the 1 / N of the mean reduction",
        "CrossEntropyLoss() takes the mean over the N samples: loss = -sum(logp[n, y_n]) / N "
        "and dlogits = dloss * (p - onehot) / N; the forward and the backward agree.",
        {"cross_entropy": [
            ((CE_LOSS, "loss = -logp[rows, self.targets].sum()"),
             (CE_DLOGITS, "dlogits = dloss * (self.p - onehot)")),
            ((CE_DLOGITS, "dlogits = dloss * (self.p - onehot)"),),
            ((CE_LOSS, "loss = -logp[rows, self.targets].sum()"),),
        ]},
    ),
    Mistake(
        "ce-unfused-gradient",
        "cross-entropy gradient through 1 / p and the softmax Jacobian",
        "right for ordinary logits, nan for a confident wrong prediction: dL/dp = -1 / p "
        "overflows when the target's probability underflows to 0, and inf * 0 is nan",
        "Fuse the two steps: through log-softmax the gradient is dloss * (p - onehot) / N, "
        "with no division by p; derive it once and use it.",
        {"cross_entropy": [((CE_DLOGITS,
                             "dp = np.zeros_like(self.p)\n"
                             "        dp[rows, self.targets] = -dloss / (n * self.p[rows, self.targets])\n"
                             "        dlogits = self.p * (dp - (dp * self.p).sum(axis=1, keepdims=True))"),)]},
    ),
    Mistake(
        "ce-log-of-softmax",
        "cross-entropy as log(softmax(x)), which underflows",
        "right for ordinary logits, an infinite loss for a confident wrong prediction: the "
        "target's probability underflows to 0 and log(0) = -inf, where the true loss is "
        "about 800",
        "Compute log-softmax directly: logp = z - log(sum(exp(z))) with z = x - max(x); it is "
        "finite however small the probability.",
        {"cross_entropy": [((CE_LOGP, "logp = np.log(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True))"),)]},
    ),
    Mistake(
        "ce-no-onehot",
        "cross-entropy gradient without the onehot",
        "the loss is right, dlogits is not: it is p / N, which is positive everywhere and sums "
        "to 1 / N per row, where the right gradient sums to zero",
        "The target's own logit gets the -1: dlogits = dloss * (p - onehot(y)) / N, because "
        "d logp_y / d x_j = [y == j] - p_j.",
        {"cross_entropy": [((CE_DLOGITS, "dlogits = dloss * self.p / n"),)]},
    ),
]

NB = "notebooks/{}.ipynb, section {}"
TAUGHT_IN = {
    "bn-momentum-flipped": NB.format("batchnorm", "7 (Momentum: which side does it weight?)"),
    "bn-running-var-biased": NB.format("batchnorm", "7 (Biased vs unbiased variance)"),
    "var-unbiased-in-normalization": NB.format("layernorm", "7 (Biased variance)"),
    "eps-outside-sqrt": NB.format("layernorm", "7 (eps inside the square root)"),
    "stats-over-too-few-axes": NB.format("layernorm", "7 (Which axes, and train vs eval)"),
    "ln-over-batch": NB.format("interview_practice", "1 (Intuition: which axis)"),
    "gn-strided-groups": NB.format("groupnorm_instancenorm", "7 (groups are contiguous)"),
    "backward-stats-constant": "normcore explain layernorm (every path from x to y)",
    "backward-no-xhat-term": "normcore explain layernorm (the path through the variance)",
    "backward-no-mean-term": "normcore explain layernorm (the path through the mean)",
    "rms-backward-mean-term": "normcore explain rmsnorm (no mean, no mean term)",
    "dparam-wrong-reduction": NB.format("interview_practice", "4 (The backward)"),
    "grad-assigned": NB.format("interview_practice", "4 (The backward)"),
    "bn-eval-batch-stats": NB.format("batchnorm", "7 (Training vs evaluation)"),
    "bn-train-running-stats": NB.format("batchnorm", "7 (Training vs evaluation)"),
    "bn-eval-squared-var": NB.format("batchnorm", "7 (The running variance is a variance)"),
    "bn-eval-backward-batch-formula": NB.format("batchnorm", "7 (Training vs evaluation)"),
    "bn-stats-per-position": NB.format("batchnorm", "1 (Intuition) and 2 (The formulas)"),
    "rms-subtracts-mean": NB.format("rmsnorm", "1 (Intuition: scale without centring)"),
    "rms-wrong-normaliser": NB.format("rmsnorm", "7 (The normaliser is the number of features)"),
    "rms-batch-size-normaliser": NB.format("rmsnorm",
                                           "7 (The normaliser is the number of features)"),
    "rms-over-whole-tensor": NB.format("rmsnorm", "7 (One RMS per sample, not per batch)"),
    "dropout-no-scale": NB.format("dropout", "7 (Forgetting the scale)"),
    "dropout-eval-scaling": NB.format("dropout", "7 (Train vs eval)"),
    "dropout-active-in-eval": NB.format("dropout", "7 (Train vs eval)"),
    "dropout-fresh-mask": NB.format("dropout", "7 (A new mask in the backward is wrong)"),
    "dropout-p-is-keep": NB.format("dropout", "7 (p is the probability of dropping)"),
    "dropout-scale-1-over-p": NB.format("dropout", "7 (Forgetting the scale)"),
    "dropout-backward-no-scale": NB.format("dropout", "4 (The backward, step by step)"),
}
SOLUTION = "normcore practice solution {} (the derivation in its docstring)"
TAUGHT_IN.update({m: SOLUTION.format("softmax") for m in (
    "softmax-no-max-shift", "softmax-diagonal-jacobian", "softmax-wrong-axis")})
TAUGHT_IN.update({m: SOLUTION.format("cross_entropy") for m in (
    "ce-summed-not-averaged", "ce-unfused-gradient", "ce-log-of-softmax", "ce-no-onehot")})

BY_ID = {m.id: m for m in CATALOG}


def mistakes_for(exercise):
    """The catalogued mistakes that apply to an exercise, in catalog order."""
    return [m for m in CATALOG if exercise in m.variants]
