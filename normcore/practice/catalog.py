"""The catalog of mistakes people make when they hand-write a norm layer, DyT, Dropout,
softmax, log-softmax, cross-entropy, attention (with or without QK-norm), a residual block
with its norm, a small MLP with BatchNorm, the fold of a BatchNorm into a Linear, or
SyncBatchNorm across workers.

Each ``Mistake`` has an id, a title, the symptom it produces and a hint toward the fix (not
the code). Its *signature* is a mutant: the reference answer in ``solutions/`` with exactly
that mistake, made by replacing a piece of one or two lines of the answer's source
(``variants``; a mistake may be written in more than one way). Each piece is an ``Anchor``:
its text and the tag of its line, the ``[name]`` at the end of that line in the answer. The
grader runs every mutant on the same checks as the user's layer and names the mistake whose
numbers the user's numbers match. It never reads the user's source, so the same mistake
written in another style (a staged backward, loops) gets the same name; where styles give
different numbers (BatchNorm's staged backward in evaluation), the mistake has one variant
per style. ``taught_in`` says where normcore teaches the right way: a notebook section or
``normcore explain``.
"""

from dataclasses import dataclass, field


class Anchor(str):
    """A piece of a reference answer's code, found on the line of the answer tagged ``[tag]``.

    The lines a mutant rewrites end with a name in brackets (``rstd = ...  # (N, 1) [rstd]``),
    so an anchor survives any edit of the answer that keeps its tagged line: lines added,
    removed, moved or reworded elsewhere. ``mutants.apply_variant`` requires the tag on exactly
    one line and the piece exactly once on it, and tests/test_practice.py checks every anchor
    of the catalog against every answer it applies to.
    """

    def __new__(cls, tag, text):
        anchor = super().__new__(cls, text)
        anchor.tag = tag
        return anchor

    def __repr__(self):
        return f"Anchor({self.tag!r}, {str(self)!r})"


# The pieces of the reference answers that the mutants replace, each named once here with the
# tag of its line. Mutants replace the smallest piece they can, so that two mistakes combine.
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
VAR = Anchor("var", "var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)")
VAR_GROUPED = Anchor("var", "var = ((xg - mean) ** 2).mean(axis=-1, keepdims=True)")
RSTD = Anchor("rstd", "np.sqrt(var + self.eps)")
RRMS = Anchor("rrms", "np.sqrt(ms + eps)")
MEAN_SQUARE = Anchor("mean-square", "ms = (x ** 2).mean(axis=axes, keepdims=True)")
AXES_TRAILING = Anchor("axes", "axes = tuple(range(-len(self.normalized_shape), 0))")
DX = Anchor("dx", "dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)")
DX_GROUPED = Anchor("dx", "dx = rstd * (dx_hat_g - mean_dx_hat - x_hat_g * mean_dx_hat_x_hat)")
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
DROP_SCALE = Anchor("scale", "scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)")
DROP_KEEP = Anchor("keep", "keep = self.rng.random(x.shape) >= self.p")
DROP_EVAL = Anchor("eval", "if not self.training or self.p == 0.0:")
DROP_EVAL_RETURN = Anchor("eval-return", "return x")
DROP_BACKWARD = Anchor("dx", "return (dy * self.mask).astype(dy.dtype)")
SM_AXIS = Anchor("axis", "self.axis = axis")
SM_SHIFT = Anchor("shift", "z = x - x.max(axis=a, keepdims=True)")
SM_DX = Anchor("dx", "dx = y * (dy - (dy * y).sum(axis=a, keepdims=True))")
CE_LOGP = Anchor("logp", "logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))")
CE_LOSS = Anchor("loss", "loss = -logp[rows, self.targets].mean()")
CE_DLOGITS = Anchor("dlogits", "dlogits = dloss * (self.p - onehot) / n")
# --- transformer_block ---
BLOCK_POSITION = Anchor("position", "self.position = position")
BLOCK_Y_PRE = Anchor("y-pre", "y = x + self._ffn(self._ln(x))")
BLOCK_DX_PRE = Anchor("dx-pre", "dx = dy + self._ln_backward(self._ffn_backward(dy))")
BLOCK_DZ_POST = Anchor("dz-post", "dz = self._ln_backward(dy)")
BLOCK_DX_POST = Anchor("dx-post", "dx = dz + self._ffn_backward(dz)")
BLOCK_RELU_MASK = Anchor("relu-backward", "da = dr * (a > 0)")
BLOCK_DW1 = Anchor("dw1", "self.w1.grad += rows(h).T @ rows(da)")
BLOCK_DB1 = Anchor("db1", "self.b1.grad += rows(da).sum(axis=0)")
BLOCK_DW2 = Anchor("dw2", "self.w2.grad += rows(r).T @ rows(dg)")
BLOCK_DB2 = Anchor("db2", "self.b2.grad += rows(dg).sum(axis=0)")

# --- log_softmax ---
LSM_LOGP = Anchor("logp", "self.logp = z - np.log(np.exp(z).sum(axis=a, keepdims=True))")
LSM_DX = Anchor("dx", "dx = dy - p * dy.sum(axis=a, keepdims=True)")
# --- attention ---
ATT_SPLIT = Anchor("split-heads", "t.reshape(B, T, H, C // H).transpose(0, 2, 1, 3)")
ATT_MERGE = Anchor("merge-heads", "t.transpose(0, 2, 1, 3).reshape(B, T, H * D)")
ATT_SCORES = Anchor("scores", "scores = q @ k.swapaxes(-1, -2) / D ** 0.5")
ATT_FUTURE = Anchor("future", "future = np.triu(np.ones((T, T), dtype=bool), k=1)")
ATT_MASK = Anchor("mask", "scores = np.where(future, -np.inf, scores)")
ATT_SHIFT = Anchor("shift", "z = scores - scores.max(axis=-1, keepdims=True)")
ATT_SOFTMAX = Anchor("softmax", "attn = e / e.sum(axis=-1, keepdims=True)")
ATT_DSCORES = Anchor("dscores",
                     "dscores = attn * (dattn - (dattn * attn).sum(axis=-1, keepdims=True))")
ATT_DQ = Anchor("dq", "dq = dscores @ k / D ** 0.5")
ATT_DK = Anchor("dk", "dk = dscores.swapaxes(-1, -2) @ q / D ** 0.5")
ATT_DV = Anchor("dv", "dv = attn.swapaxes(-1, -2) @ dout")
ATT_DX = Anchor("dx", "dx = dx_q + dx_k + dx_v")
ATT_DW = tuple(Anchor(f"dw{n}", f"self.w{n}.grad += ") for n in "qkvo")
# --- mlp_with_batchnorm ---
MLP_VAR = Anchor("var", "var = ((h - mean) ** 2).mean(axis=0, keepdims=True)")
MLP_DLOGITS = Anchor("dlogits", "dlogits = dloss * (p - onehot) / n")
MLP_DW2 = Anchor("dw2", "self.w2.grad += a.T @ dlogits")
MLP_DB2 = Anchor("db2", "self.b2.grad += dlogits.sum(axis=0)")
MLP_DHBN = Anchor("dhbn", "dhbn = da * (1.0 - a ** 2)")
MLP_DGAMMA = Anchor("dgamma", "self.gamma.grad += (dhbn * h_hat).sum(axis=0)")
MLP_DBETA = Anchor("dbeta", "self.beta.grad += dhbn.sum(axis=0)")
MLP_DH_HAT = Anchor("dh-hat", "dh_hat = dhbn * self.gamma.data")
MLP_DH = Anchor("dh", "dh = rstd * (dh_hat - mean_dh_hat - h_hat * mean_dh_hat_h_hat)")
MLP_DW1 = Anchor("dw1", "self.w1.grad += x.T @ dh")
MLP_DB1 = Anchor("db1", "self.b1.grad += dh.sum(axis=0)")
MLP_HBN = "(self.gamma.data * h_hat + self.beta.data)"  # tanh's input, recomputed in the backward
# --- qk_norm ---
QK_AXES = Anchor("norm-axes", "self.norm_axes = (-1,)")
QK_QNORM = Anchor("q-norm", "qn, q_cache = self.rms_norm(q, gq)")
QK_KNORM = Anchor("k-norm", "kn, k_cache = self.rms_norm(k, gk)")
QK_SCORES = Anchor("scores", "scores = qn @ kn.swapaxes(-1, -2) / D ** 0.5")
QK_DQN = Anchor("dqn", "dqn = dscores @ kn / D ** 0.5")
QK_DKN = Anchor("dkn", "dkn = dscores.swapaxes(-1, -2) @ qn / D ** 0.5")
QK_DQ = Anchor("dq", "dq = self.rms_norm_backward(dqn, gq, q_cache, self.gamma_q)")
QK_DK = Anchor("dk", "dk = self.rms_norm_backward(dkn, gk, k_cache, self.gamma_k)")
QK_DNORM = Anchor("dnorm", "return rrms * (dt_hat - t_hat * mean_dt_hat_t_hat)")
QK_DGAMMA = Anchor("dgamma", "param.grad += (dout * t_hat).sum(axis=(0, 1, 2))")
# --- dyt ---
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
# --- fold_batchnorm ---
FOLD_SCALE = Anchor("scale", "gamma / np.sqrt(running_var + eps)")
FOLD_WEIGHT = Anchor("weight", "s[:, None] * W")
FOLD_BIAS = Anchor("bias", "s * (b - running_mean) + beta")
# --- sync_batchnorm ---
SYNC_COUNT = Anchor("count", "x.sum(axis=0)")
SYNC_MEAN = Anchor("mean", "mean = got[1:] / N")
SYNC_SQDEV = Anchor("sq-dev", "((x - mean) ** 2).sum(axis=0)")
SYNC_VAR = Anchor("var", "var = got2 / N")
SYNC_UNBIASED = Anchor("unbiased", "var * N / (N - 1)")
SYNC_REDUCE = Anchor("reduce", "got = self.group.all_reduce(local)")
SYNC_DX = Anchor("dx", "(dy - sum_dy / N - x_hat * sum_dy_xhat / N)")
SYNC_LOCAL_MEAN = "x.sum(axis=0) / max(n_k, 1)"  # this worker's own mean (0 on an empty shard)

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
            # the backward derived for the biased variance, or re-derived for n - 1 (staged)
            "mlp_with_batchnorm": [
                ((MLP_VAR, "var = h.var(axis=0, ddof=1, keepdims=True)"),),
                ((MLP_VAR, "var = h.var(axis=0, ddof=1, keepdims=True)"),
                 (MLP_DH, "dh = rstd * (dh_hat - mean_dh_hat - h_hat * mean_dh_hat_h_hat * n / (n - 1))")),
            ],
        },
    ),
    Mistake(
        "eps-outside-sqrt",
        "eps added outside the square root",
        "outputs differ slightly for ordinary inputs and a lot when the variance (or mean "
        "square) is comparable to eps; a constant row's input gradient is scaled by 1/eps "
        "instead of 1/sqrt(eps); a fold's W' and b' are off the same way where running_var "
        "is comparable to eps",
        "eps goes inside: divide by sqrt(var + eps), not by sqrt(var) + eps (for RMSNorm, "
        "sqrt(mean(x**2) + eps), not RMS + eps).",
        {
            **_same(MEAN_VAR_NORMS, ((RSTD, "(np.sqrt(var) + self.eps)"),)),
            "rmsnorm": [((RRMS, "(np.sqrt(ms) + eps)"),)],
            "transformer_block": [((RSTD, "(np.sqrt(var) + self.eps)"),)],
            "fold_batchnorm": [((FOLD_SCALE, "gamma / (np.sqrt(running_var) + eps)"),)],
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
            **_same(("batchnorm", "layernorm", "transformer_block"), ((DX, "dx = rstd * dx_hat"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * dx_hat_g"),)],
            "rmsnorm": [((DX_RMS, "dx = rrms * dx_hat"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * dh_hat"),)],
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
            **_same(("batchnorm", "layernorm", "transformer_block"),
                    ((DX, "dx = rstd * (dx_hat - mean_dx_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - mean_dx_hat)"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * (dh_hat - mean_dh_hat)"),)],
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
    ),
    Mistake(
        "grad-assigned",
        "parameter gradients assigned instead of accumulated",
        "one backward gives the right parameter gradients (dgamma and dbeta, or the weights' "
        "and biases'), but after two backward calls they hold only the second one's gradient",
        "Gradients accumulate: add into each parameter's .grad (+=) and let the caller zero "
        "them; a parameter used twice must receive both shares.",
        {
            **_same(("batchnorm", "groupnorm"),
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
    ),
    Mistake(
        "bn-eval-batch-stats",
        "batch statistics used in evaluation",
        "eval() changes nothing: the output in evaluation is standardised with the batch's own "
        "mean and variance (and the running statistics may keep moving)",
        "In evaluation BatchNorm is a fixed affine map: normalise with running_mean and "
        "running_var, and leave them untouched.",
        {"batchnorm": [
            ((BN_BATCH_STATS, "batch_stats = True"),),
            ((BN_BATCH_STATS, "batch_stats = True"),
             (BN_UPDATE, "if self.track_running_stats:")),
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
            ((BN_UPDATE,
              "mean_batch, var_batch = mean, var\n"
              "        mean, var = self.running_mean.reshape(view), self.running_var.reshape(view)\n"
              "        if self.training and self.track_running_stats:"),
             (BN_NEW_MEAN, "+ m * mean_batch.ravel()"),
             (BN_NEW_VAR, "+ m * var_batch.ravel()")),
        ]},
    ),
    Mistake(
        "bn-eval-squared-var",
        "evaluation divides by sqrt(running_var**2 + eps)",
        "training is right and the running statistics are right, but evaluation outputs are "
        "off: running_var is squared as if it were a standard deviation",
        "running_var already is a variance (sigma squared): evaluation divides by "
        "sqrt(running_var + eps).",
        {"batchnorm": [((BN_EVAL_VAR, "var = self.running_var.reshape(view) ** 2"),)],
         "fold_batchnorm": [((FOLD_SCALE, "gamma / np.sqrt(running_var ** 2 + eps)"),)]},
    ),
    Mistake(
        "bn-eval-backward-batch-formula",
        "evaluation backward with the training formula",
        "everything is right except dx in evaluation mode: it has the mean and variance terms of "
        "training, as if the running statistics depended on the batch",
        "In evaluation the running statistics are constants, so BatchNorm is an affine map of x "
        "and dx is just the direct term; remember in forward which statistics were used.",
        {"batchnorm": [
            ((BN_EVAL_BACKWARD, "if False:"),),
            # the staged (dvar, dmu) form: with running statistics x_hat is not centred, and
            # dmu's dvar * mean(-2 (x - mu)) term no longer vanishes
            ((BN_EVAL_BACKWARD, "if False:"),
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
            ((DROP_EVAL_RETURN, "return x * (1.0 - self.p)"),),
            ((DROP_EVAL_RETURN, "return x / (1.0 - self.p)"),),
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
            **_same(("batchnorm", "layernorm", "transformer_block"),
                    ((DX, "dx = rstd * (dx_hat - x_hat * mean_dx_hat_x_hat)"),)),
            "groupnorm": [((DX_GROUPED, "dx = rstd * (dx_hat_g - x_hat_g * mean_dx_hat_x_hat)"),)],
            "mlp_with_batchnorm": [((MLP_DH, "dh = rstd * (dh_hat - h_hat * mean_dh_hat_h_hat)"),)],
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
        {"softmax": [((SM_SHIFT, "z = x"),)],
         "attention": [((ATT_SHIFT, "z = scores"),)]},
    ),
    Mistake(
        "softmax-diagonal-jacobian",
        "softmax backward with the diagonal of the Jacobian only",
        "the forward is right, dx is not: dx = dy * y * (1 - y), as if each y_i depended on "
        "x_i alone (a sigmoid's derivative); the correct dx sums to zero along the axis, "
        "this one does not",
        "Every y_i depends on every x_j of its slice: dy_i/dx_j = y_i ([i == j] - y_j). "
        "Applied to dy that is dx = y * (dy - sum(dy * y)) along the axis.",
        {"softmax": [((SM_DX, "dx = dy * y * (1 - y)"),)],
         "attention": [((ATT_DSCORES, "dscores = dattn * attn * (1 - attn)"),)]},
    ),
    Mistake(
        "softmax-wrong-axis",
        "softmax along the wrong axis",
        "right when the axis is the last one, wrong for any other: the slices that sum to 1 "
        "are the last axis's (or the first axis's), not those of the axis asked for",
        "Take the max, the exponentials' sum and, in the backward, sum(dy * y) along "
        "self.axis, with keepdims=True so they broadcast back.",
        {"softmax": [((SM_AXIS, "self.axis = -1"),), ((SM_AXIS, "self.axis = 0"),)],
         "log_softmax": [((SM_AXIS, "self.axis = -1"),), ((SM_AXIS, "self.axis = 0"),)]},
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
        ],
         "mlp_with_batchnorm": [
            ((CE_LOSS, "loss = -logp[rows, self.targets].sum()"),
             (MLP_DLOGITS, "dlogits = dloss * (p - onehot)")),
            ((MLP_DLOGITS, "dlogits = dloss * (p - onehot)"),),
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
    # --- log_softmax ---
    Mistake(
        "lsm-log-of-softmax",
        "log-softmax as log(softmax(x)), which underflows",
        "right for ordinary logits, -inf for a logit far below the others: its probability "
        "exp(-800) underflows to 0 and log(0) = -inf, where the true log-probability is about "
        "-800",
        "Never form the probabilities first: logp = z - log(sum(exp(z))) with z = x - max(x) "
        "takes the log of a sum that is at least 1, so it is finite however small p is.",
        {"log_softmax": [
            ((LSM_LOGP, "self.logp = np.log(np.exp(z) / np.exp(z).sum(axis=a, keepdims=True))"),),
        ]},
    ),
    Mistake(
        "lsm-diagonal-backward",
        "log-softmax backward with the diagonal of the Jacobian only",
        "the forward is right, dx is not: dx = dy - p * dy (= dy * (1 - p)), as if logp_i "
        "depended on x_i alone; the correct dx = dy - p * sum(dy) sums to zero along the "
        "axis, this one does not",
        "logp_i = x_i - log(sum_j exp(x_j)) depends on every x_j through the log of the sum: "
        "d logp_i / d x_j = [i == j] - p_j. Sum that against dy over i.",
        {"log_softmax": [
            ((LSM_DX, "dx = dy - p * dy"),),
        ]},
    ),
    Mistake(
        "lsm-softmax-backward",
        "log-softmax backward written with softmax's formula",
        "the forward is right, dx is not: it is softmax's backward y * (dy - sum(dy * y)) "
        "with the log-probabilities in place of y (or with y = exp(logp)), which is the "
        "gradient of a different function",
        "LogSoftmax is not Softmax: differentiate logp = z - log(sum(exp(z))) itself; its "
        "Jacobian is I - 1 p^T, which gives dx = dy - p * sum(dy) along the axis.",
        {"log_softmax": [
            ((LSM_DX, "dx = self.logp * (dy - (dy * self.logp).sum(axis=a, keepdims=True))"),),
            ((LSM_DX, "dx = p * (dy - (dy * p).sum(axis=a, keepdims=True))"),),
        ]},
    ),
    # --- attention ---
    Mistake(
        "attn-mask-after-softmax",
        "causal mask applied after the softmax",
        "non-causal attention is right, causal is not: the weights of the future keys are "
        "zeroed after the softmax (attn times a 0/1 mask), so the rows sum to less than 1 "
        "(row i keeps only its share of a softmax taken over all T keys)",
        "Mask the scores, not the probabilities: set the future scores to -inf *before* the "
        "softmax, so that it normalises over the allowed keys only and every row sums to 1.",
        {"attention": [((ATT_MASK, "scores = scores"),
                        (ATT_SOFTMAX, "attn = e / e.sum(axis=-1, keepdims=True) * ~future"))]},
    ),
    Mistake(
        "attn-mask-zero-fill",
        "masked scores set to 0 instead of -inf",
        "non-causal attention is right, causal is not: every future key keeps the weight "
        "exp(0) / sum, so each position still attends to the future (a score of 0 is an "
        "ordinary score, not an absent one; scores * tril(ones) does the same)",
        "A masked key must get probability 0, i.e. exp(score) = 0: fill the masked scores "
        "with -inf (or a very large negative number), then take the softmax.",
        {"attention": [((ATT_MASK, "scores = np.where(future, 0.0, scores)"),)]},
    ),
    Mistake(
        "attn-no-scale",
        "attention scores not divided by sqrt(D)",
        "right for one channel per head (D = 1), wrong otherwise: the softmax is too peaked "
        "because the scores are sqrt(D) times too large; or the forward is right and the "
        "backward forgot the scale: dwq, dwk and the q and k shares of dx are sqrt(D) times "
        "too large",
        "scores = q k^T / sqrt(D), D = C / H the head's width: q . k sums D products, so "
        "without the scale its spread grows with D. The same 1 / sqrt(D) multiplies dq and dk.",
        {"attention": [
            ((ATT_SCORES, "scores = q @ k.swapaxes(-1, -2)"), (ATT_DQ, "dq = dscores @ k"),
             (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q")),
            ((ATT_DQ, "dq = dscores @ k"), (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q")),
        ],
         "qk_norm": [
            ((QK_SCORES, "scores = qn @ kn.swapaxes(-1, -2)"), (QK_DQN, "dqn = dscores @ kn"),
             (QK_DKN, "dkn = dscores.swapaxes(-1, -2) @ qn")),
        ]},
    ),
    Mistake(
        "attn-scale-by-d-model",
        "attention scores divided by sqrt(d_model) instead of sqrt(D)",
        "right with one head (D = C), wrong with several: the scores are divided by "
        "sqrt(C) = sqrt(H * D), sqrt(H) times too much, so the softmax is too flat",
        "The scale is the head's width: D = d_model / n_heads channels take part in each "
        "q . k product, so divide by sqrt(D), not by sqrt(d_model).",
        {"attention": [((ATT_SCORES, "scores = q @ k.swapaxes(-1, -2) / C ** 0.5"),
                        (ATT_DQ, "dq = dscores @ k / C ** 0.5"),
                        (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q / C ** 0.5"))]},
    ),
    Mistake(
        "attn-wrong-head-split",
        "heads split or merged with a bare reshape",
        "right with one head or one position, wrong otherwise: (B, T, C) was reshaped "
        "straight to (B, H, T, D), or (B, H, T, D) straight back to (B, T, C), so a head's "
        "channels come from several positions and positions are mixed up",
        "Split the channel axis where it is: reshape (B, T, C) to (B, T, H, D), then swap the "
        "T and H axes to (B, H, T, D); to merge, swap back first, then reshape to (B, T, C).",
        {"attention": [
            ((ATT_SPLIT, "t.reshape(B, H, T, C // H)"),
             (ATT_MERGE, "t.reshape(B, T, H * D)")),
            ((ATT_MERGE, "t.reshape(B, T, H * D)"),),
        ]},
    ),
    Mistake(
        "attn-dx-missing-share",
        "attention dx missing the share of q, k or v",
        "the forward and every dw are right, dx is not: x feeds the query, the key and the "
        "value projections, and dx holds only two of the three terms",
        "x is used three times, so its gradient is the sum of three shares: "
        "dx = dq @ wq^T + dk @ wk^T + dv @ wv^T (each merged back to (B, T, C)).",
        {"attention": [((ATT_DX, "dx = dx_k + dx_v"),), ((ATT_DX, "dx = dx_q + dx_v"),),
                       ((ATT_DX, "dx = dx_q + dx_k"),)]},
    ),
    Mistake(
        "attn-softmax-over-queries",
        "attention softmax over the queries instead of the keys",
        "the columns of the attention matrix sum to 1 instead of its rows: each key's "
        "weights are normalised over the queries, so an output is not a weighted average of "
        "the values (for one position the two agree)",
        "In scores[..., i, j] row i is query i and column j is key j; each query's weights "
        "over the keys sum to 1: softmax (and its backward's sum) over the last axis.",
        {"attention": [((ATT_SHIFT, "z = scores - scores.max(axis=-2, keepdims=True)"),
                        (ATT_SOFTMAX, "attn = e / e.sum(axis=-2, keepdims=True)"),
                        (ATT_DSCORES, "dscores = attn * (dattn - (dattn * attn).sum(axis=-2, "
                                      "keepdims=True))"))]},
    ),
    Mistake(
        "attn-mask-flipped",
        "causal mask flipped: the past masked instead of the future",
        "non-causal attention is right, causal is not: each position attends to itself and "
        "the later positions (the first sees every key, the last only itself), as with "
        "tril(ones, -1) where triu(ones, 1) belongs",
        "Query i may attend to keys j <= i: mask the entries with j > i, the ones *above* the "
        "diagonal of scores[..., i, j] (np.triu(..., k=1)); check it on T = 3 by hand.",
        {"attention": [((ATT_FUTURE, "future = np.tril(np.ones((T, T), dtype=bool), k=-1)"),)]},
    ),
    Mistake(
        "attn-mask-covers-diagonal",
        "causal mask that also hides each position from itself",
        "non-causal attention is right, causal is nan: the diagonal is masked too (triu(ones) "
        "with k=0), so the first position has no key left, its softmax is 0 / 0 = nan, and "
        "the backward spreads the nan to every gradient",
        "Position i may attend to itself: mask only j > i, strictly above the diagonal "
        "(np.triu(..., k=1)), so every row keeps at least one key.",
        {"attention": [((ATT_FUTURE, "future = np.triu(np.ones((T, T), dtype=bool), k=0)"),)]},
    ),
    Mistake(
        "attn-backward-untransposed",
        "attention backward: dk or dv without its transpose",
        "the forward and dwq are right; dk (hence dwk and dx) or dv (hence dwv and dx) is "
        "not: dk = dscores @ q / sqrt(D), written by symmetry with dq, or dv = attn @ dout, "
        "where the scores' rows belong to queries and their columns to keys",
        "k and v enter transposed or from the right: scores = q k^T, so dk = dscores^T q / "
        "sqrt(D); out = attn v, so dv = attn^T dout. Check the shapes and which index each "
        "axis carries.",
        {"attention": [((ATT_DK, "dk = dscores @ q / D ** 0.5"),),
                       ((ATT_DV, "dv = attn @ dout"),)]},
    ),
    # --- mlp_with_batchnorm ---
    Mistake(
        "tanh-derivative-from-input",
        "tanh's derivative taken from its input",
        "the loss, dw2 and db2 are right; dgamma, dbeta, dw1 and dx are not: the gradient "
        "through tanh was multiplied by 1 - hbn**2 with tanh's input hbn (or 1 - h**2 with "
        "h, the BatchNorm's input), which can even be negative, where tanh'(hbn) = "
        "1 - tanh(hbn)**2 = 1 - a**2",
        "d tanh(u) / du = 1 - tanh(u)**2: written with tanh's output a, which the forward "
        "already has, not with its input u.",
        {"mlp_with_batchnorm": [  # BatchNorm's output hbn, or the Linear's output h before it
            ((MLP_DHBN, f"dhbn = da * (1.0 - {MLP_HBN} ** 2)"),),
            ((MLP_DHBN, "dhbn = da * (1.0 - (x @ self.w1.data + self.b1.data) ** 2)"),),
        ]},
    ),
    Mistake(
        "bn-backward-no-gamma",
        "BatchNorm backward without the factor gamma",
        "dgamma, dbeta and everything above them are right, dh is not (nor dw1, nor dx): "
        "the gradient was sent back into h_hat as dhbn itself instead of dhbn * gamma",
        "hbn = gamma * h_hat + beta, so the gradient reaching h_hat is scaled by gamma: "
        "dh_hat = dhbn * gamma, and the BatchNorm backward starts from dh_hat.",
        {"mlp_with_batchnorm": [((MLP_DH_HAT, "dh_hat = dhbn"),)]},
    ),
    Mistake(
        "dw-from-pre-activation",
        "weight gradient from the activation's input instead of its output",
        "only dw2 is wrong: it was computed with tanh's input hbn (the pre-activation), "
        "where the second Linear's input is tanh's output a",
        "A Linear layer's weight gradient is (the layer's input).T @ (its output's gradient); "
        "the second Linear's input is the activation a = tanh(hbn).",
        {"mlp_with_batchnorm": [((MLP_DW2, f"self.w2.grad += {MLP_HBN}.T @ dlogits"),)]},
    ),
    Mistake(
        "bias-grad-averaged",
        "bias gradient averaged over the batch instead of summed",
        "db2 is N times too small, every other gradient is right: the bias's gradient was "
        "the mean of dlogits over the rows, but dlogits already holds the mean's 1 / N, so "
        "the 1 / N is applied twice (db1 is zero either way)",
        "A bias is broadcast over the N rows, so its gradient is the sum of the rows' "
        "gradients; the 1 / N of the mean belongs to dlogits, once.",
        {"mlp_with_batchnorm": [((MLP_DB2, "self.b2.grad += dlogits.mean(axis=0)"),)]},
    ),
    Mistake(
        "ce-mean-over-classes",
        "cross-entropy averaged over every entry of the (N, C) array",
        "the loss is C times too small (C the number of classes), and so are the gradients "
        "when the backward follows it: -mean(onehot * logp) divides by N * C, where the "
        "mean is over the N samples only",
        "Only the target's entry of each row counts: loss = -sum_n logp[n, y_n] / N. "
        "np.mean over the whole (N, C) array also divides by the C classes.",
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
    ),
    # --- transformer_block ---
    Mistake(
        "block-residual-grad-dropped",
        "residual block backward without the identity path's gradient",
        "the forward and every parameter gradient are right, dx is not: it is only the "
        "branch's share, LN'(F'(dy)) in Pre-Norm or F'(dz) in Post-Norm; the dy (or dz) that "
        "the skip connection carries straight back to x is missing",
        "y = x + B(x) has two paths from x to y and the chain rule adds them: dx = dy + B'(dy). "
        "The identity path's gradient is the point of a residual connection.",
        {"transformer_block": [
            ((BLOCK_DX_PRE, "dx = self._ln_backward(self._ffn_backward(dy))"),),
            ((BLOCK_DX_POST, "dx = self._ffn_backward(dz)"),),
        ]},
    ),
    Mistake(
        "block-norm-backward-skipped",
        "Post-Norm backward that skips the LayerNorm's backward",
        "Pre-Norm is right; in Post-Norm the forward is right but dx and the feed-forward's "
        "gradients are not: the gradient reached the residual sum as dy itself (the norm taken "
        "for the identity, dgamma and dbeta then left at zero) or as dy * gamma (its affine "
        "part only), without rstd and the mean and variance terms",
        "In y = LN(x + F(x)) the norm is the last operation, so the backward starts with its "
        "whole backward, dz = LN'(dy), mean and variance terms included; then the residual "
        "add: dx = dz + F'(dz).",
        {"transformer_block": [
            ((BLOCK_DZ_POST, "dz = dy"),),
            ((BLOCK_DZ_POST, "self._ln_backward(dy)\n            dz = dy"),),
            ((BLOCK_DZ_POST, "self._ln_backward(dy)\n            dz = dy * self.gamma.data"),),
        ]},
    ),
    Mistake(
        "block-relu-mask-missing",
        "feed-forward backward without ReLU's mask",
        "the forward is right; dx, dw1 and db1 are not, in both positions: the gradient "
        "flowed back through the units ReLU switched off (a <= 0), as if the activation were "
        "the identity",
        "relu'(a) is 1 where a > 0 and 0 elsewhere: multiply the gradient at ReLU's output by "
        "the mask a > 0 from the forward, before dw1, db1 and the input's gradient.",
        {"transformer_block": [((BLOCK_RELU_MASK, "da = dr"),)]},
    ),
    Mistake(
        "block-pre-post-swapped",
        "Pre-Norm and Post-Norm swapped",
        "every number of each position is the other position's: 'pre' computes "
        "LN(x + F(x)), the norm after the residual add (the 2017 Transformer's Post-Norm), and "
        "'post' computes x + F(LN(x))",
        "Pre-Norm normalises the sub-layer's input and leaves the residual stream alone: "
        "y = x + F(LN(x)). Post-Norm normalises the sum: y = LN(x + F(x)).",
        {"transformer_block": [
            ((BLOCK_POSITION, 'self.position = {"pre": "post", "post": "pre"}[position]'),),
        ]},
    ),
    Mistake(
        "block-norm-on-branch-output",
        "Pre-Norm written as x + LN(F(x)), the norm on the branch's output",
        "Post-Norm is right; in Pre-Norm every number is off: the norm was applied to the "
        "sub-layer's output instead of its input (y = x + LN(F(x)), another block, Swin v2's "
        "res-post-norm), and the backward went through the norm before F",
        "Pre-Norm normalises what goes into the sub-layer: y = x + F(LN(x)). The backward "
        "then goes back through F first and the norm second: dx = dy + LN'(F'(dy)).",
        {"transformer_block": [
            ((BLOCK_Y_PRE, "y = x + self._ln(self._ffn(x))"),
             (BLOCK_DX_PRE, "dx = dy + self._ffn_backward(self._ln_backward(dy))")),
        ]},
    ),
    # --- qk_norm ---
    Mistake(
        "qk-norm-over-d-model",
        "QK-norm over the whole d_model instead of each head's D channels",
        "right with one head, wrong with several: the RMS of q (and k) was taken over all "
        "C = H * D channels of a position (the norm applied before split_heads, or over the "
        "heads and channels), so one head's size sets the other heads' scale",
        "QK-norm normalises each head's query and key on their own: split the heads first, "
        "then take the mean square over the last axis of (B, H, T, D), D channels; the "
        "backward's mean runs over the same axis.",
        {"qk_norm": [((QK_AXES, "self.norm_axes = (1, -1)"),)]},
    ),
    Mistake(
        "qk-norm-after-scale",
        "QK-norm applied after the 1 / sqrt(D) scaling",
        "every number is off, as if the scale were missing: q was multiplied by 1 / sqrt(D) "
        "and then normalised, and RMSNorm is scale invariant, so the norm undoes the scale "
        "and the scores are sqrt(D) times too large (where q and k are near 0, eps lets a "
        "little of the scale through)",
        "Normalise first, scale after: scores = norm(q) norm(k)^T / sqrt(D). The norm fixes "
        "the size of q and k; the 1 / sqrt(D) then keeps the D-term dot product near unit "
        "spread.",
        {"qk_norm": [((QK_QNORM, "qn, q_cache = self.rms_norm(q / D ** 0.5, gq)"),
                      (QK_SCORES, "scores = qn @ kn.swapaxes(-1, -2)"),
                      (QK_DQN, "dqn = dscores @ kn"),
                      (QK_DKN, "dkn = dscores.swapaxes(-1, -2) @ qn"),
                      (QK_DQ, "dq = self.rms_norm_backward(dqn, gq, q_cache, self.gamma_q) "
                              "/ D ** 0.5"))]},
    ),
    Mistake(
        "qk-norm-backward-skipped",
        "QK-norm's backward skipped: dq and dk passed straight through",
        "the forward, dwv, dwo and the norm weights' gradients are right; dwq, dwk and dx "
        "are not: the gradient reaching the normalised q and k was used as the gradient of "
        "q and k themselves, as if the norm were the identity",
        "qn = gamma * q / rms(q) depends on every channel of the head: dq = rrms * (dqn * "
        "gamma - q_hat * mean(dqn * gamma * q_hat)) over the head's D channels, RMSNorm's "
        "backward, before merging the heads.",
        {"qk_norm": [((QK_DNORM, "return dout"),)]},
    ),
    Mistake(
        "qk-norm-one-side",
        "QK-norm on only one of q and k",
        "every number is off: only the queries were normalised and the keys left raw (or the "
        "reverse), so the scores grow with the size of the raw side and gamma_k (or "
        "gamma_q) gets no gradient",
        "QK-norm normalises both sides of the dot product: qn = RMSNorm_q(q) and kn = "
        "RMSNorm_k(k), each with its own weight, so that every score is bounded.",
        {"qk_norm": [
            ((QK_KNORM, "kn, k_cache = k, None"), (QK_DK, "dk = dkn")),
            ((QK_QNORM, "qn, q_cache = q, None"), (QK_DQ, "dq = dqn")),
        ]},
    ),
    Mistake(
        "qk-norm-dgamma-head-mean",
        "QK-norm weight's gradient averaged over the heads instead of summed",
        "right with one head; with H heads dgamma_q and dgamma_k are H times too small and "
        "everything else is right: the weight (D,) is shared by every head, but its gradient "
        "took the mean of the heads' shares (as if each head had its own weight)",
        "One weight (D,) serves every head, so every head adds its share: dgamma sums dqn * "
        "q_hat over the batch, the heads and the positions, not a mean over the heads.",
        {"qk_norm": [((QK_DGAMMA, "param.grad += (dout * t_hat).sum(axis=(0, 2)).mean(axis=0)"),)]},
    ),
    # --- dyt ---
    Mistake(
        "dyt-dalpha-not-summed",
        "DyT's dalpha not summed over every element",
        "the forward, dx, dgamma and dbeta are right, dalpha is not: it is an array with one "
        "value per channel (alpha kept per channel, or du * x summed over the batch only) or "
        "one per row (summed over the last axis only), or one number N * D times too small "
        "(the mean); a batch of one, or a single channel, can hide the array",
        "alpha is ONE scalar that multiplies every element of x, so each element sends its "
        "share du * x back to it: dalpha is the sum over every axis, the batch and the "
        "channels alike, one number of shape (1,).",
        {"dyt": [
            ((DYT_ALPHA, "np.full(self.normalized_shape, alpha_init, dtype)"),
             (DYT_DALPHA_SUM, "(du * x).sum(axis=lead)")),
            ((DYT_DALPHA, "self.alpha.grad = self.alpha.grad + (du * x).sum(axis=-1)"),),
            ((DYT_DALPHA_SUM, "(du * x).mean()"),),
        ]},
    ),
    Mistake(
        "dyt-tanh-derivative-from-input",
        "DyT's tanh derivative taken from its input",
        "the forward, dgamma and dbeta are right; dx and dalpha are not: the gradient through "
        "tanh was multiplied by 1 - x**2 (or 1 - (alpha * x)**2), the input squared, which "
        "turns negative where it exceeds 1 in size, instead of 1 - t**2 with t = tanh(alpha * x)",
        "d tanh(u) / du = 1 - tanh(u)**2: written with tanh's output t, which the forward "
        "already has, not with its input; it lies between 0 and 1 and vanishes where tanh "
        "saturates.",
        {"dyt": [((DYT_SLOPE, "(1.0 - x ** 2)"),),
                 ((DYT_SLOPE, "(1.0 - (self.alpha.data * x) ** 2)"),)]},
    ),
    Mistake(
        "dyt-dx-missing-alpha",
        "DyT's dx without the factor alpha",
        "the forward and every parameter gradient are right; dx is off by the factor alpha "
        "everywhere (1 / alpha times the right value): the chain rule stopped at u = alpha * x",
        "u = alpha * x, so du/dx = alpha: dx = alpha * du, the last link of the chain.",
        {"dyt": [((DYT_DX, "dx = du"),)]},
    ),
    Mistake(
        "dyt-dalpha-missing-x",
        "DyT's dalpha without the factor x",
        "the forward, dx, dgamma and dbeta are right; dalpha is the sum of du alone: the "
        "factor x of d(alpha * x) / d alpha was dropped",
        "u = alpha * x, so du/dalpha = x: dalpha sums du * x, the gradient at u times the "
        "input, over every element.",
        {"dyt": [((DYT_DALPHA_SUM, "du.sum()"),)]},
    ),
    Mistake(
        "dyt-gamma-inside-tanh",
        "DyT with gamma inside the tanh",
        "every number is off, the forward first: y = tanh(alpha * gamma * x) + beta, so gamma "
        "scales tanh's input instead of its output and the outputs never leave (beta - 1, "
        "beta + 1)",
        "DyT squashes first and scales after, as LayerNorm's affine comes after the "
        "normalisation: y = gamma * tanh(alpha * x) + beta, so gamma can undo the squashing's "
        "range.",
        {"dyt": [(
            (DYT_U, "u = self.alpha.data * self.gamma.data * x"),
            (DYT_SCALE, "y = y"),
            (DYT_DGAMMA_T, "(dy * (1.0 - t ** 2) * self.alpha.data * x)"),
            (DYT_DT, "dt = dy"),
            (DYT_DALPHA_SUM, "(du * self.gamma.data * x).sum()"),
            (DYT_DX, "dx = self.alpha.data * self.gamma.data * du"),
        )]},
    ),
    Mistake(
        "dyt-dgamma-from-input",
        "DyT's dgamma computed with the input instead of t",
        "the forward, dx, dalpha and dbeta are right, dgamma is not: it sums dy * x (or "
        "dy * alpha * x) where gamma multiplies t = tanh(alpha * x), as if gamma scaled the "
        "input (LayerNorm's dgamma = sum(dy * x_hat) with x in place of x_hat)",
        "y = gamma * t + beta, so dy/dgamma = t: dgamma sums dy * t over the leading axes, "
        "t being what gamma multiplies.",
        {"dyt": [((DYT_DGAMMA_T, "(dy * x)"),),
                 ((DYT_DGAMMA_T, "(dy * self.alpha.data * x)"),)]},
    ),
    Mistake(
        "dyt-dbeta-not-summed",
        "DyT's dbeta missing, or averaged instead of summed",
        "everything is right except dbeta: it stays zero (beta's gradient was never added), "
        "or it is the mean of dy over the leading axes, too small by their size",
        "beta is added at every position of the leading axes, so its gradient is the sum of "
        "dy over them, one entry per element of normalized_shape, added into beta.grad.",
        {"dyt": [((DYT_DBETA, "pass"),),
                 ((DYT_DBETA, "self.beta.grad += dy.mean(axis=lead)"),)]},
    ),
    Mistake(
        "dyt-backward-no-gamma",
        "DyT's backward without the factor gamma",
        "the forward, dgamma and dbeta are right; dx and dalpha are not: the gradient was "
        "sent into tanh as dy itself instead of dy * gamma",
        "y = gamma * t + beta, so the gradient reaching t is scaled by gamma: dt = dy * gamma, "
        "and the rest of the backward (du, dx, dalpha) starts from dt.",
        {"dyt": [((DYT_DT, "dt = dy"),)]},
    ),
    # --- fold_batchnorm ---
    Mistake(
        "fold-bias-not-centred",
        "the folded bias not shifted by the running mean",
        "W' is right and so is every output's scale, but b' is off by s * running_mean: "
        "b' = s * b + beta, as if BatchNorm only scaled and shifted, so every output is off by "
        "a constant per feature, large when the running mean is",
        "Evaluation subtracts running_mean before it scales: bn(z) = s * (z - running_mean) + "
        "beta, and z = x @ W.T + b, so b' = s * (b - running_mean) + beta.",
        {"fold_batchnorm": [((FOLD_BIAS, "s * b + beta"),)]},
    ),
    Mistake(
        "fold-scale-on-columns",
        "the fold's scale applied to the columns of W instead of its rows",
        "b' is right, W' is not: W * s scales column i (input feature i) by s_i where row j "
        "(output feature j) should be scaled by s_j; it runs only because W is square, and "
        "raises a shape error otherwise",
        "s has one value per OUTPUT feature, and W is (out, in): output j is row j of W, so "
        "W' = s[:, None] * W (or np.diag(s) @ W), not W * s.",
        {"fold_batchnorm": [((FOLD_WEIGHT, "W * s[None, :]"),)]},
    ),
    Mistake(
        "fold-beta-missing",
        "the fold forgets beta",
        "W' is right, b' is off by beta: b' = s * (b - running_mean), the BatchNorm's shift "
        "left out of the folded layer",
        "BatchNorm adds beta after the scale, and a constant added to every output goes into "
        "the bias: b' = s * (b - running_mean) + beta.",
        {"fold_batchnorm": [((FOLD_BIAS, "s * (b - running_mean)"),)]},
    ),
    Mistake(
        "fold-bias-dropped",
        "the fold drops the Linear's own bias",
        "W' is right, b' is off by s * b: b' = beta - s * running_mean, as if the Linear had "
        "no bias; a Linear without bias (b = 0) hides it",
        "The Linear's bias goes through the BatchNorm like the rest of z: it is shifted by the "
        "running mean and scaled, b' = s * (b - running_mean) + beta.",
        {"fold_batchnorm": [((FOLD_BIAS, "beta - s * running_mean"),)]},
    ),
    # --- sync_batchnorm ---
    Mistake(
        "sync-bn-variances-averaged",
        "SyncBatchNorm averages the workers' own variances",
        "right when every worker's shard has the same mean, too small otherwise: each worker "
        "took squared deviations from its OWN mean (its own variance) and the workers averaged "
        "them, so the spread between the workers' means is lost; the outputs come out too "
        "large and running_var too small",
        "The variance of the whole batch is the mean of squared deviations from the GLOBAL "
        "mean: all-reduce the mean first, then sum (x_k - mean)**2; or merge each worker's "
        "(n_k, mean_k, M2_k) with Chan's formula, M2 = sum_k [M2_k + n_k (mean_k - mean)**2].",
        {"sync_batchnorm": [
            ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(axis=0)"),),
            ((SYNC_SQDEV, f"((x - {SYNC_LOCAL_MEAN}) ** 2).sum(axis=0) / max(n_k, 1)"),
             (SYNC_VAR, "var = got2 / self.group.world_size")),
        ]},
    ),
    Mistake(
        "sync-bn-unbiased-local-count",
        "SyncBatchNorm's running_var unbiased with the worker's own count",
        "the forward, dx and the gradients are right, and so is running_mean; running_var is "
        "not, and differs from worker to worker: the batch variance was multiplied by "
        "n_k / (n_k - 1), the worker's own count, instead of N / (N - 1)",
        "The variance is the whole batch's, so is its unbiased correction: N / (N - 1) with N "
        "the global count from the all-reduce; every worker's running statistics must be "
        "the same.",
        {"sync_batchnorm": [((SYNC_UNBIASED, "var * n_k / (n_k - 1)"),)]},
    ),
    Mistake(
        "sync-bn-backward-not-reduced",
        "SyncBatchNorm's backward without its all-reduce",
        "the forward, the running statistics and the local dgamma and dbeta are right; dx is "
        "not: its mean terms used this worker's sums of dy and dy * x_hat only (divided by N "
        "or by n_k), as if the other workers' rows did not depend on these inputs",
        "Every output depends on every worker's inputs through the global mean and variance, "
        "so dx needs the GLOBAL sums of dy and dy * x_hat: one all-reduce of the two local "
        "sums (2C values), then dx = gamma * rstd * (dy - sum_dy / N - x_hat * sum_dy_xhat / N).",
        {"sync_batchnorm": [
            ((SYNC_REDUCE, "got = local"),),
            ((SYNC_REDUCE, "got = local"),
             (SYNC_DX, "(dy - sum_dy / len(dy) - x_hat * sum_dy_xhat / len(dy))")),
        ]},
    ),
    Mistake(
        "sync-bn-one-round-variance",
        "SyncBatchNorm's variance as E[x**2] - E[x]**2 from one round of sums",
        "right for ordinary inputs, off when the mean is large against the spread (a mean of "
        "1e5 with a spread of 2 loses about 9 of float64's 16 digits): the sums of x and of "
        "x**2 cancel catastrophically",
        "Subtract the global mean before squaring: a second all-reduce of sum((x_k - mean)**2) "
        "after the first one gives the mean; or send each worker's (n_k, mean_k, M2_k) and "
        "merge them with Chan's formula, which is stable in one round.",
        {"sync_batchnorm": [((SYNC_SQDEV, "(x ** 2).sum(axis=0)"),
                             (SYNC_VAR, "var = got2 / N - mean ** 2"))]},
    ),
    Mistake(
        "sync-bn-mean-of-means",
        "SyncBatchNorm's mean averaged over the workers, not weighted by their counts",
        "right when every shard has the same number of rows, wrong with uneven shards or an "
        "empty one: the global mean was taken as the plain average of the K workers' means, "
        "so the small shards weigh as much as the large ones",
        "The batch's mean is the sum of every row over the count of every row: all-reduce "
        "[n_k, sum(x_k)] and divide, mean = S / N (or weight each worker's mean by n_k / N).",
        {"sync_batchnorm": [((SYNC_COUNT, SYNC_LOCAL_MEAN),
                             (SYNC_MEAN, "mean = got[1:] / self.group.world_size"))]},
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
SECTION_9 = {
    "9.1 (Softmax: the whole Jacobian, and the max shift)": (
        "softmax-no-max-shift", "softmax-diagonal-jacobian"),
    "9.2 (Cross-entropy: log-softmax, and the fused gradient)": (
        "ce-summed-not-averaged", "ce-unfused-gradient", "ce-log-of-softmax", "ce-no-onehot",
        "lsm-log-of-softmax"),
    "9.3 (Attention: the scale, the mask, three shares of dx)": (
        "attn-no-scale", "attn-scale-by-d-model", "attn-mask-after-softmax",
        "attn-dx-missing-share"),
    "9.4 (The residual block: the identity path carries dy)": (
        "block-residual-grad-dropped", "block-norm-backward-skipped"),
}
TAUGHT_IN.update({m: SOLUTION.format("softmax") for m in (
    "softmax-no-max-shift", "softmax-diagonal-jacobian", "softmax-wrong-axis")})
TAUGHT_IN.update({m: SOLUTION.format("cross_entropy") for m in (
    "ce-summed-not-averaged", "ce-unfused-gradient", "ce-log-of-softmax", "ce-no-onehot")})
TAUGHT_IN.update({m: SOLUTION.format("log_softmax") for m in (
    "lsm-log-of-softmax", "lsm-diagonal-backward", "lsm-softmax-backward")})
TAUGHT_IN.update({m: SOLUTION.format("attention") for m in (
    "attn-mask-after-softmax", "attn-mask-zero-fill", "attn-no-scale", "attn-scale-by-d-model",
    "attn-wrong-head-split", "attn-dx-missing-share", "attn-softmax-over-queries",
    "attn-mask-flipped", "attn-mask-covers-diagonal", "attn-backward-untransposed")})
TAUGHT_IN.update({m: SOLUTION.format("qk_norm") for m in (
    "qk-norm-over-d-model", "qk-norm-after-scale", "qk-norm-backward-skipped", "qk-norm-one-side",
    "qk-norm-dgamma-head-mean")})
TAUGHT_IN.update({m: SOLUTION.format("mlp_with_batchnorm") for m in (
    "tanh-derivative-from-input", "bn-backward-no-gamma", "dw-from-pre-activation",
    "bias-grad-averaged", "ce-mean-over-classes")})
TAUGHT_IN.update({m: SOLUTION.format("transformer_block") for m in (
    "block-residual-grad-dropped", "block-norm-backward-skipped", "block-relu-mask-missing",
    "block-pre-post-swapped", "block-norm-on-branch-output")})
EXPLAIN_DYT = "normcore explain dyt ({})"  # DyT's forward and backward, node by node
TAUGHT_IN.update({
    "dyt-dalpha-not-summed": EXPLAIN_DYT.format("alpha gets a share from every element"),
    "dyt-tanh-derivative-from-input": EXPLAIN_DYT.format("tanh's slope, 1 - t**2"),
    "dyt-dx-missing-alpha": EXPLAIN_DYT.format("scale by alpha: the share to x"),
    "dyt-dalpha-missing-x": EXPLAIN_DYT.format("scale by alpha: the share to alpha"),
    "dyt-gamma-inside-tanh": EXPLAIN_DYT.format("the forward: tanh, then scale, then shift"),
    "dyt-dgamma-from-input": EXPLAIN_DYT.format("scale: the share to gamma"),
    "dyt-dbeta-not-summed": EXPLAIN_DYT.format("shift: the share to beta"),
    "dyt-backward-no-gamma": EXPLAIN_DYT.format("scale: the share to t"),
})
TAUGHT_IN.update({m: SOLUTION.format("fold_batchnorm") for m in (
    "fold-bias-not-centred", "fold-scale-on-columns", "fold-beta-missing", "fold-bias-dropped")})
TAUGHT_IN.update({m: SOLUTION.format("sync_batchnorm") for m in (
    "sync-bn-variances-averaged", "sync-bn-unbiased-local-count", "sync-bn-backward-not-reduced",
    "sync-bn-one-round-variance", "sync-bn-mean-of-means")})
TAUGHT_IN.update({m: NB.format("interview_practice", section)
                  for section, mistakes in SECTION_9.items() for m in mistakes})

BY_ID = {m.id: m for m in CATALOG}


def mistakes_for(exercise):
    """The catalogued mistakes that apply to an exercise, in catalog order."""
    return [m for m in CATALOG if exercise in m.variants]
