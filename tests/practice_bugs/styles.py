"""Buggy answers in other styles than the reference answers, for the practice tests.

Each is a correct answer from ``tests/practice_alt/`` (einsum, a loop over the heads, loops over
the rows, a staged backward, layer functions) with one catalogued mistake written into it by
hand: the replacements below, a docstring that names the mistake and the changed lines. The
grader never reads the source, so these show that a mistake is named by its numbers whatever
the style. Like the generated files they are written for each test run (``write``): an answer
edited so that a replacement no longer applies exactly once fails the tests, instead of a copy
drifting away from it. Bug files in styles with no correct answer here stay files of their own
next to this one.
"""

from pathlib import Path

ALT = Path(__file__).resolve().parents[1] / "practice_alt"

# file name -> (the correct answer in tests/practice_alt/, [(what it has, the mistake instead)])
STYLE_BUGS = {
    'attn-backward-untransposed.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention whose dk is written by symmetry with dq: dscores @ q, no transpose."""\n'),
        ('        dk = np.einsum("bhij,bihd->bjhd", ds, q).reshape(B, T, C)\n',
         '        dk = np.einsum("bhij,bjhd->bihd", ds, q).reshape(B, T, C)\n'),
    ]),
    'attn-backward-untransposed@head-loops.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Self-attention (a loop over the heads) whose dv is attn @ dout, without the transpose."""\n'),
        ('            dv[..., c] = p.transpose(0, 2, 1) @ do\n',
         '            dv[..., c] = p @ do\n'),
    ]),
    'attn-dx-missing-share.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention whose dx forgets the path through the keys: dq and dv only."""\n'),
        ('        return dq @ wq.T + dk @ wk.T + dv @ wv.T\n',
         '        return dq @ wq.T + dv @ wv.T\n'),
    ]),
    'attn-dx-missing-share@head-loops.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Self-attention (a loop over the heads) whose dx forgets the query\'s share: x is\ndifferentiated through k and v only."""\n'),
        ('            dx += g @ w.data.astype(dy.dtype).T\n',
         '            if w is not self.wq:\n                dx += g @ w.data.astype(dy.dtype).T\n'),
    ]),
    'attn-mask-after-softmax.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Causal self-attention that zeroes the future keys\' weights after the softmax: the rows\nno longer sum to 1."""\n'),
        ('            s = np.where(blocked, -np.inf, s)\n',
         ''),
        ('            p = e / e.sum(axis=2, keepdims=True)\n',
         '            p = e / e.sum(axis=2, keepdims=True)\n            p = p * ~blocked  # hide the future\n'),
    ]),
    'attn-mask-covers-diagonal.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Causal self-attention whose mask also hides each position from itself (triu with k=0)."""\n'),
        ('        blocked = np.tril(np.ones((T, T), dtype=bool)) == 0 if self.causal else np.zeros((T, T), bool)\n',
         '        blocked = np.triu(np.ones((T, T), dtype=bool)) if self.causal else np.zeros((T, T), bool)\n'),
    ]),
    'attn-mask-flipped.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Causal self-attention whose -inf triangle is below the diagonal: the past is masked."""\n'),
        ('            s = s + np.triu(np.full((T, T), -np.inf, dtype=x.dtype), 1)\n',
         '            s = s + np.tril(np.full((T, T), -np.inf, dtype=x.dtype), -1)\n'),
    ]),
    'attn-mask-zero-fill.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Causal self-attention that masks by multiplying the scores with a lower triangle of ones:\nthe future keys get a score of 0, not -inf."""\n'),
        ('            s = s + np.triu(np.full((T, T), -np.inf, dtype=x.dtype), 1)\n',
         '            s = s * np.tril(np.ones((T, T), dtype=x.dtype))\n'),
    ]),
    'attn-no-scale.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with raw dot products as scores: no 1 / sqrt(D), forward or backward."""\n'),
        ('        s = np.einsum("bihd,bjhd->bhij", q, k) * D ** -0.5\n',
         '        s = np.einsum("bihd,bjhd->bhij", q, k)\n'),
        ('        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5\n',
         '        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))\n'),
    ]),
    'attn-no-scale@backward-only.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Self-attention whose forward scales the scores by 1 / sqrt(D) but whose backward forgets\nthe scale in dq and dk."""\n'),
        ('            ds = np.einsum("bij,bijk->bik", dp, jac) / np.sqrt(D).astype(dy.dtype)\n',
         '            ds = np.einsum("bij,bijk->bik", dp, jac)\n'),
    ]),
    'attn-scale-by-d-model.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention that scales the scores by 1 / sqrt(d_model), the model width, instead of\n1 / sqrt(D), the head width."""\n'),
        ('        s = np.einsum("bihd,bjhd->bhij", q, k) * D ** -0.5\n',
         '        s = np.einsum("bihd,bjhd->bhij", q, k) * C ** -0.5\n'),
        ('        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5\n',
         '        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * C ** -0.5\n'),
    ]),
    'attn-softmax-over-queries.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with the softmax over the queries (axis -2): the columns sum to 1."""\n'),
        ('        s = s - s.max(axis=-1, keepdims=True)\n',
         '        s = s - s.max(axis=-2, keepdims=True)\n'),
        ('        p = p / p.sum(axis=-1, keepdims=True)\n',
         '        p = p / p.sum(axis=-2, keepdims=True)\n'),
        ('        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5\n',
         '        ds = p * (dp - (p * dp).sum(axis=-2, keepdims=True)) * D ** -0.5\n'),
    ]),
    'backward-no-mean-term@layernorm-loops.py': ('layernorm_loops.py', [
        ('"""Test fixture: a correct LayerNorm written with a Python loop over the rows.\n\nEach row is normalised on its own and its backward is the staged (dvar, dmu) form. The\ngrader must pass it.\n"""\n',
         '"""Test fixture: a LayerNorm written with a loop over the rows whose staged backward\nforgets the path through the mean, backward-no-mean-term."""\n'),
        ('            dx[i] = dxhat * ivar + dvar * 2.0 * xmu / d + dmu / d\n',
         '            dx[i] = dxhat * ivar + dvar * 2.0 * xmu / d              # the dmu / d term forgotten\n'),
    ]),
    'backward-no-mean-term@mlp-staged.py': ('mlp_with_batchnorm_staged.py', [
        ('"""Test fixture: a correct MLPWithBatchNorm, staged node by node in the makemore style.\n\nThe cross-entropy goes through probs, counts and the max of the logits instead of the fused\ngradient, and the BatchNorm backward through bndiff2, bnvar and bnmeani instead of the\ncompact formula. The grader must pass it.\n"""\n',
         '"""An MLP with BatchNorm, staged node by node, whose backward drops the path through the mean."""\n'),
        ('        dbnmeani = -dbndiff.sum(0)\n        dhprebn += 1 / n * np.ones_like(self.hprebn) * dbnmeani\n',
         ''),
    ]),
    'backward-no-mean-term@transformer_block-staged.py': ('transformer_block_functions.py', [
        ('"""Test fixture: a correct TransformerBlock in the cs231n style.\n\nEach layer is a pair of functions, the forward returning a cache and the backward every\ngradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use\ntensordot, ReLU is np.where. The grader must pass it.\n"""\n',
         '"""Test fixture: a cs231n-style residual block whose staged LayerNorm backward forgets the\ndmu / d term, backward-no-mean-term."""\n'),
        ('    dx = dxhat * ivar + dvar * 2.0 * xmu / d + dmu / d\n',
         '    dx = dxhat * ivar + dvar * 2.0 * xmu / d\n'),
    ]),
    'block-norm-backward-skipped@functions.py': ('transformer_block_functions.py', [
        ('"""Test fixture: a correct TransformerBlock in the cs231n style.\n\nEach layer is a pair of functions, the forward returning a cache and the backward every\ngradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use\ntensordot, ReLU is np.where. The grader must pass it.\n"""\n',
         '"""Test fixture: a cs231n-style Post-Norm block that passes the gradient straight through\nthe LayerNorm, as if it were the identity (and so never computes dgamma, dbeta)."""\n'),
        ('            dz, dgamma, dbeta = layernorm_backward(dy, self.ln_cache)\n',
         '            dz, dgamma, dbeta = dy, 0.0, 0.0\n'),
    ]),
    'block-relu-mask-missing@loops.py': ('transformer_block_loops.py', [
        ('"""Test fixture: a correct TransformerBlock written with Python loops over the rows (tokens):\none token\'s LayerNorm and feed-forward at a time, np.outer for the weight gradients. The\ngrader must pass it.\n"""\n',
         '"""Test fixture: a residual block written with Python loops over the rows (tokens) whose\nfeed-forward backward forgets ReLU\'s mask, block-relu-mask-missing."""\n'),
        ('        da = (self.w2.data @ g) * (a > 0)\n',
         "        da = self.w2.data @ g                       # ReLU's mask forgotten\n"),
    ]),
    'block-residual-grad-dropped@functions.py': ('transformer_block_functions.py', [
        ('"""Test fixture: a correct TransformerBlock in the cs231n style.\n\nEach layer is a pair of functions, the forward returning a cache and the backward every\ngradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use\ntensordot, ReLU is np.where. The grader must pass it.\n"""\n',
         '"""Test fixture: a cs231n-style residual block (layer functions with caches) whose backward\nreturns the branch\'s gradient only, block-residual-grad-dropped."""\n'),
        ('            dx = dy + dxn\n',
         '            dx = dxn\n'),
        ('            dx = dz + df\n',
         '            dx = df\n'),
    ]),
    'bn-eval-backward-batch-formula@moveaxis-staged.py': ('batchnorm_staged.py', [
        ('"""Test fixture: a correct BatchNorm1d in the staged (dvar, dmu) style of CS231n.\n\nThe backward goes node by node through the mean and the variance instead of the compact\nformula, and uses the direct term alone in evaluation. The grader must pass it.\n"""\n',
         '"""Test fixture: a staged BatchNorm1d (channels moved last) that uses the training\nbackward in evaluation too, bn-eval-backward-batch-formula."""\n'),
        ('        if training:\n',
         '        if True:  # the training derivation, in evaluation too\n'),
    ]),
    'softmax-diagonal-jacobian@attention.py': ('attention_head_loops.py', [
        ('"""Test fixture: a correct causal/non-causal self-attention that loops over the heads, slicing\nhead h\'s D channels out of q, k and v, with the causal mask as a boolean np.where and the\nsoftmax\'s backward through an explicit per-row Jacobian. The grader must pass it.\n"""\n',
         '"""Self-attention whose softmax backward keeps only the diagonal of the Jacobian."""\n'),
        ('            jac = np.einsum("bij,jk->bijk", p, np.eye(T, dtype=p.dtype)) - np.einsum("bij,bik->bijk", p, p)\n            ds = np.einsum("bij,bijk->bik", dp, jac) / np.sqrt(D).astype(dy.dtype)\n',
         '            ds = dp * p * (1 - p) / np.sqrt(D).astype(dy.dtype)\n'),
    ]),
    'softmax-no-max-shift@attention.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention whose softmax is exp(s) / sum(exp(s)) with no max subtracted."""\n'),
        ('        s = s - s.max(axis=-1, keepdims=True)\n',
         ''),
    ]),
    'tanh-derivative-from-input.py': ('mlp_with_batchnorm_staged.py', [
        ('"""Test fixture: a correct MLPWithBatchNorm, staged node by node in the makemore style.\n\nThe cross-entropy goes through probs, counts and the max of the logits instead of the fused\ngradient, and the BatchNorm backward through bndiff2, bnvar and bnmeani instead of the\ncompact formula. The grader must pass it.\n',
         '"""An MLP with BatchNorm, staged node by node (makemore style), whose tanh backward uses\n1 - hpreact**2, tanh\'s input squared, instead of 1 - h**2.\n'),
        ('        dhpreact = (1.0 - self.h ** 2) * dh\n',
         '        dhpreact = (1.0 - self.hpreact ** 2) * dh\n'),
    ]),
    'var-unbiased-in-normalization@mlp-staged.py': ('mlp_with_batchnorm_staged.py', [
        ('"""Test fixture: a correct MLPWithBatchNorm, staged node by node in the makemore style.\n\nThe cross-entropy goes through probs, counts and the max of the logits instead of the fused\ngradient, and the BatchNorm backward through bndiff2, bnvar and bnmeani instead of the\ncompact formula. The grader must pass it.\n',
         '"""An MLP with BatchNorm, staged node by node (makemore style), normalising with Bessel\'s\ncorrection 1 / (n - 1) in training, in the forward and consistently in the backward.\n'),
        ('        self.bnvar = 1 / n * self.bndiff2.sum(0, keepdims=True)\n',
         '        self.bnvar = 1 / (n - 1) * self.bndiff2.sum(0, keepdims=True)\n'),
        ('        dbndiff2 = (1 / n * np.ones_like(self.bndiff2)) * dbnvar\n',
         '        dbndiff2 = (1 / (n - 1) * np.ones_like(self.bndiff2)) * dbnvar\n'),
    ]),
}


def source(name):
    """The buggy file ``name``: its correct answer with its replacements, each applied once."""
    answer, replacements = STYLE_BUGS[name]
    text = (ALT / answer).read_text()
    for old, new in replacements:
        if text.count(old) != 1:
            raise ValueError(f"{name}: a replaced piece is not exactly once in {answer}: {old!r}")
        text = text.replace(old, new)
    return text


def write(out):
    """Write every buggy file of STYLE_BUGS into the folder ``out``; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name in STYLE_BUGS:
        (out / name).write_text(source(name))
    return sorted(out / name for name in STYLE_BUGS)
