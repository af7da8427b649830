"""Multi-head self-attention mistakes, with and without QK-norm."""

from ...i18n import N_
from .base import Anchor, Mistake, Published, notebook, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
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
QK_MEAN_SQUARE = Anchor("mean-square", "ms = (t ** 2).mean(axis=self.norm_axes, keepdims=True)")

MISTAKES = [
    Mistake(
        "attn-mask-after-softmax",
        N_("causal mask applied after the softmax"),
        N_("non-causal attention is right, causal is not: the weights of the future keys are "
           "zeroed after the softmax (attn times a 0/1 mask), so the rows sum to less than 1 "
           "(row i keeps only its share of a softmax taken over all T keys)"),
        N_("Mask the scores, not the probabilities: set the future scores to -inf *before* the "
           "softmax, so that it normalises over the allowed keys only and every row sums to 1."),
        {"attention": [((ATT_MASK, "scores = scores"),
                        (ATT_SOFTMAX, "attn = e / e.sum(axis=-1, keepdims=True) * ~future")),
                       # with the exact backward of that forward (through the full softmax p)
                       ((ATT_MASK, "scores = scores"),
                        (ATT_SOFTMAX, "self.p_full, self.keep = e / e.sum(axis=-1, keepdims=True), ~future\n"
                                      "        attn = self.p_full * self.keep"),
                        (ATT_DSCORES, "dp = dattn * self.keep\n        dscores = self.p_full * "
                                      "(dp - (dp * self.p_full).sum(axis=-1, keepdims=True))"))]},
        taught=notebook("interview_practice",
                       N_("9.3 (Attention: the scale, the mask, three shares of dx)")),
    ),
    Mistake(
        "attn-mask-zero-fill",
        N_("masked scores set to 0 instead of -inf"),
        N_("non-causal attention is right, causal is not: every future key keeps the weight "
           "exp(0) / sum, so each position still attends to the future (a score of 0 is an "
           "ordinary score, not an absent one; scores * tril(ones) does the same)"),
        N_("A masked key must get probability 0, i.e. exp(score) = 0: fill the masked scores "
           "with -inf (or a very large negative number), then take the softmax."),
        {"attention": [((ATT_MASK, "scores = np.where(future, 0.0, scores)"),)]},
        taught=solution("attention"),
    ),
    Mistake(
        "attn-no-scale",
        N_("attention scores not divided by sqrt(D)"),
        N_("right for one channel per head (D = 1), wrong otherwise: the softmax is too peaked "
           "because the scores are sqrt(D) times too large; or the forward is right and the "
           "backward forgot the scale: dwq, dwk and the q and k shares of dx are sqrt(D) times "
           "too large"),
        N_("scores = q k^T / sqrt(D), D = C / H the head's width: q . k sums D products, so "
           "without the scale its spread grows with D. The same 1 / sqrt(D) multiplies dq and dk."),
        {"attention": [
            ((ATT_SCORES, "scores = q @ k.swapaxes(-1, -2)"), (ATT_DQ, "dq = dscores @ k"),
             (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q")),
            ((ATT_DQ, "dq = dscores @ k"), (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q")),
        ],
         "qk_norm": [
            ((QK_SCORES, "scores = qn @ kn.swapaxes(-1, -2)"), (QK_DQN, "dqn = dscores @ kn"),
             (QK_DKN, "dkn = dscores.swapaxes(-1, -2) @ qn")),
        ]},
        taught=notebook("interview_practice",
                       N_("9.3 (Attention: the scale, the mask, three shares of dx)")),
    ),
    Mistake(
        "attn-scale-by-d-model",
        N_("attention scores divided by sqrt(d_model) instead of sqrt(D)"),
        N_("right with one head (D = C), wrong with several: the scores are divided by "
           "sqrt(C) = sqrt(H * D), sqrt(H) times too much, so the softmax is too flat"),
        N_("The scale is the head's width: D = d_model / n_heads channels take part in each "
           "q . k product, so divide by sqrt(D), not by sqrt(d_model)."),
        {"attention": [((ATT_SCORES, "scores = q @ k.swapaxes(-1, -2) / C ** 0.5"),
                        (ATT_DQ, "dq = dscores @ k / C ** 0.5"),
                        (ATT_DK, "dk = dscores.swapaxes(-1, -2) @ q / C ** 0.5"))]},
        taught=notebook("interview_practice",
                       N_("9.3 (Attention: the scale, the mask, three shares of dx)")),
    ),
    Mistake(
        "attn-wrong-head-split",
        N_("heads split or merged with a bare reshape"),
        N_("right with one head or one position, wrong otherwise: (B, T, C) was reshaped "
           "straight to (B, H, T, D), or (B, H, T, D) straight back to (B, T, C), so a head's "
           "channels come from several positions and positions are mixed up"),
        N_("Split the channel axis where it is: reshape (B, T, C) to (B, T, H, D), then swap the "
           "T and H axes to (B, H, T, D); to merge, swap back first, then reshape to (B, T, C)."),
        {"attention": [
            ((ATT_SPLIT, "t.reshape(B, H, T, C // H)"),
             (ATT_MERGE, "t.reshape(B, T, H * D)")),
            ((ATT_MERGE, "t.reshape(B, T, H * D)"),),
        ]},
        taught=solution("attention"),
    ),
    Mistake(
        "attn-dx-missing-share",
        N_("attention dx missing the share of q, k or v"),
        N_("the forward and every dw are right, dx is not: x feeds the query, the key and the "
           "value projections, and dx holds only two of the three terms"),
        N_("x is used three times, so its gradient is the sum of three shares: "
           "dx = dq @ wq^T + dk @ wk^T + dv @ wv^T (each merged back to (B, T, C))."),
        {"attention": [((ATT_DX, "dx = dx_k + dx_v"),), ((ATT_DX, "dx = dx_q + dx_v"),),
                       ((ATT_DX, "dx = dx_q + dx_k"),)]},
        taught=notebook("interview_practice",
                       N_("9.3 (Attention: the scale, the mask, three shares of dx)")),
    ),
    Mistake(
        "attn-softmax-over-queries",
        N_("attention softmax over the queries instead of the keys"),
        N_("the columns of the attention matrix sum to 1 instead of its rows: each key's "
           "weights are normalised over the queries, so an output is not a weighted average of "
           "the values (for one position the two agree)"),
        N_("In scores[..., i, j] row i is query i and column j is key j; each query's weights "
           "over the keys sum to 1: softmax (and its backward's sum) over the last axis."),
        {"attention": [((ATT_SHIFT, "z = scores - scores.max(axis=-2, keepdims=True)"),
                        (ATT_SOFTMAX, "attn = e / e.sum(axis=-2, keepdims=True)"),
                        (ATT_DSCORES, "dscores = attn * (dattn - (dattn * attn).sum(axis=-2, "
                                      "keepdims=True))"))]},
        taught=solution("attention"),
    ),
    Mistake(
        "attn-mask-flipped",
        N_("causal mask flipped: the past masked instead of the future"),
        N_("non-causal attention is right, causal is not: each position attends to itself and "
           "the later positions (the first sees every key, the last only itself), as with "
           "tril(ones, -1) where triu(ones, 1) belongs"),
        N_("Query i may attend to keys j <= i: mask the entries with j > i, the ones *above* the "
           "diagonal of scores[..., i, j] (np.triu(..., k=1)); check it on T = 3 by hand."),
        {"attention": [((ATT_FUTURE, "future = np.tril(np.ones((T, T), dtype=bool), k=-1)"),)]},
        taught=solution("attention"),
    ),
    Mistake(
        "attn-mask-covers-diagonal",
        N_("causal mask that also hides each position from itself"),
        N_("non-causal attention is right, causal is nan: the diagonal is masked too (triu(ones) "
           "with k=0), so the first position has no key left, its softmax is 0 / 0 = nan, and "
           "the backward spreads the nan to every gradient"),
        N_("Position i may attend to itself: mask only j > i, strictly above the diagonal "
           "(np.triu(..., k=1)), so every row keeps at least one key."),
        {"attention": [((ATT_FUTURE, "future = np.triu(np.ones((T, T), dtype=bool), k=0)"),)]},
        taught=solution("attention"),
    ),
    Mistake(
        "attn-backward-untransposed",
        N_("attention backward: dk or dv without its transpose"),
        N_("the forward and dwq are right; dk (hence dwk and dx) or dv (hence dwv and dx) is "
           "not: dk = dscores @ q / sqrt(D), written by symmetry with dq, or dv = attn @ dout, "
           "where the scores' rows belong to queries and their columns to keys"),
        N_("k and v enter transposed or from the right: scores = q k^T, so dk = dscores^T q / "
           "sqrt(D); out = attn v, so dv = attn^T dout. Check the shapes and which index each "
           "axis carries."),
        {"attention": [((ATT_DK, "dk = dscores @ q / D ** 0.5"),),
                       ((ATT_DV, "dv = attn @ dout"),)]},
        taught=solution("attention"),
    ),
    Mistake(
        "qk-norm-over-d-model",
        N_("QK-norm over the whole projection (OLMo 2's variant) instead of each head's D "
           "channels"),
        N_("right with one head, different with several: the RMS of q (and k) was taken over all "
           "C = H * D channels of a position (the norm applied before split_heads, or over the "
           "heads and channels). That is the whole-projection QK-norm OLMo 2 publishes, not what "
           "this exercise asks: one head's size sets the other heads' scale"),
        N_("Normalising the whole projection is OLMo 2's variant of QK-norm; this exercise asks "
           "for it per head, as Gemma 3 and Qwen3 do: split the heads first, then take the mean "
           "square over the last axis of (B, H, T, D), D channels; the backward's mean runs over "
           "the same axis. What the whole projection changes: the heads can trade scale, and each "
           "head's logits are bounded by H sqrt(D) max|gamma_q| max|gamma_k| instead of sqrt(D) "
           "max|gamma_q| max|gamma_k|."),
        {"qk_norm": [((QK_AXES, "self.norm_axes = (1, -1)"),)]},
        taught=solution("qk_norm"),
        published={"qk_norm": Published(
            N_("QK-norm over the whole projection, before the split into heads"),
            N_("OLMo 2 (Team OLMo, 2 OLMo 2 Furious, 2024): Olmo2Attention's q_norm and k_norm "
               "over num_heads * head_dim, Hugging Face transformers, "
               "src/transformers/models/olmo2/modeling_olmo2.py"),
            N_("QK-norm per head, as Gemma 3 and Qwen3 have it: the RMS of each head's D "
               "channels, after split_heads (over the whole projection the heads can trade "
               "scale and each head's logit bound loosens H times)"))},
    ),
    Mistake(
        "qk-norm-after-scale",
        N_("QK-norm applied after the 1 / sqrt(D) scaling"),
        N_("every number is off, as if the scale were missing: q was multiplied by 1 / sqrt(D) "
           "and then normalised, and RMSNorm is scale invariant, so the norm undoes the scale "
           "and the scores are sqrt(D) times too large (where q and k are near 0, eps lets a "
           "little of the scale through)"),
        N_("Normalise first, scale after: scores = norm(q) norm(k)^T / sqrt(D). The norm fixes "
           "the size of q and k; the 1 / sqrt(D) then keeps the D-term dot product near unit "
           "spread."),
        {"qk_norm": [((QK_QNORM, "qn, q_cache = self.rms_norm(q / D ** 0.5, gq)"),
                      (QK_SCORES, "scores = qn @ kn.swapaxes(-1, -2)"),
                      (QK_DQN, "dqn = dscores @ kn"),
                      (QK_DKN, "dkn = dscores.swapaxes(-1, -2) @ qn"),
                      (QK_DQ, "dq = self.rms_norm_backward(dqn, gq, q_cache, self.gamma_q) "
                              "/ D ** 0.5"))]},
        taught=solution("qk_norm"),
    ),
    Mistake(
        "qk-norm-backward-skipped",
        N_("QK-norm's backward skipped: dq and dk passed straight through"),
        N_("the forward, dwv, dwo and the norm weights' gradients are right; dwq, dwk and dx "
           "are not: the gradient reaching the normalised q and k was used as the gradient of "
           "q and k themselves, as if the norm were the identity"),
        N_("qn = gamma * q / rms(q) depends on every channel of the head: dq = rrms * (dqn * "
           "gamma - q_hat * mean(dqn * gamma * q_hat)) over the head's D channels, RMSNorm's "
           "backward, before merging the heads."),
        {"qk_norm": [((QK_DNORM, "return dout"),)]},
        taught=solution("qk_norm"),
    ),
    Mistake(
        "qk-norm-one-side",
        N_("QK-norm on only one of q and k"),
        N_("every number is off: only the queries were normalised and the keys left raw (or the "
           "reverse), so the scores grow with the size of the raw side and gamma_k (or "
           "gamma_q) gets no gradient"),
        N_("QK-norm normalises both sides of the dot product: qn = RMSNorm_q(q) and kn = "
           "RMSNorm_k(k), each with its own weight, so that every score is bounded."),
        {"qk_norm": [
            ((QK_KNORM, "kn, k_cache = k, None"), (QK_DK, "dk = dkn")),
            ((QK_QNORM, "qn, q_cache = q, None"), (QK_DQ, "dq = dqn")),
        ]},
        taught=solution("qk_norm"),
    ),
    Mistake(
        "qk-norm-dgamma-head-mean",
        N_("QK-norm weight's gradient averaged over the heads instead of summed"),
        N_("right with one head; with H heads dgamma_q and dgamma_k are H times too small and "
           "everything else is right: the weight (D,) is shared by every head, but its gradient "
           "took the mean of the heads' shares (as if each head had its own weight)"),
        N_("One weight (D,) serves every head, so every head adds its share: dgamma sums dqn * "
           "q_hat over the batch, the heads and the positions, not a mean over the heads."),
        {"qk_norm": [((QK_DGAMMA, "param.grad += (dout * t_hat).sum(axis=(0, 2)).mean(axis=0)"),)]},
        taught=solution("qk_norm"),
    ),
    Mistake(
        "qk-norm-shared-gamma",
        N_("QK-norm with one weight for q and k"),
        N_("every number is off: the keys were normalised with gamma_q, the queries' weight, "
           "instead of their own gamma_k, so gamma_q receives the gradients of both norms and "
           "gamma_k none (one RMSNorm module applied to both sides)"),
        N_("QK-norm has two norms with a weight each: qn = RMSNorm_q(q) with gamma_q and kn = "
           "RMSNorm_k(k) with gamma_k; each weight gets the gradient of its own norm."),
        {"qk_norm": [((QK_KNORM, "kn, k_cache = self.rms_norm(k, gq)"),
                      (QK_DK, "dk = self.rms_norm_backward(dkn, gq, k_cache, self.gamma_q)"))]},
        taught=solution("qk_norm"),
    ),
    Mistake(
        "qk-norm-mean-subtracted",
        N_("QK-norm written as a LayerNorm: the mean subtracted"),
        N_("every number is off: each head's q and k were centred before the root mean square "
           "(a LayerNorm without beta), so every normalised query and key sums to zero over the "
           "head's D channels, and the backward has LayerNorm's mean term"),
        N_("This QK-norm is an RMSNorm: q / sqrt(mean(q**2) + eps) * gamma over the head's D "
           "channels, nothing subtracted; its backward has no - mean(dq_hat) term."),
        {"qk_norm": [(
            (QK_MEAN_SQUARE, "t = t - t.mean(axis=self.norm_axes, keepdims=True)\n"
                             "        ms = (t ** 2).mean(axis=self.norm_axes, keepdims=True)"),
            (QK_DNORM, "return rrms * (dt_hat - dt_hat.mean(axis=self.norm_axes, keepdims=True) "
                       "- t_hat * mean_dt_hat_t_hat)"),
        )]},
        taught=solution("qk_norm"),
        published={"qk_norm": Published(
            N_("QK-LayerNorm: a LayerNorm on each head's q and k"),
            N_("ViT-22B (Dehghani et al., \"Scaling Vision Transformers to 22 Billion "
               "Parameters\", 2023); timm, `Attention(qk_norm=True)` with a LayerNorm per head, "
               "`timm/layers/attention.py`"),
            N_("an RMSNorm on each head's q and k, as Gemma 3 and Qwen3 have it: nothing "
               "subtracted, no bias"))},
    ),
]
