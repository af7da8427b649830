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
    'backward-no-xhat-term@batchnorm-staged.py': ('batchnorm_staged.py', [
        ('"""Test fixture: a correct BatchNorm1d in the staged (dvar, dmu) style of CS231n.\n\nThe backward goes node by node through the mean and the variance instead of the compact\nformula, and uses the direct term alone in evaluation. The grader must pass it.\n"""\n',
         '"""Test fixture: a staged BatchNorm1d (channels moved last) whose backward has the path\nthrough the mean (dmu) but forgets the one through the variance (dvar),\nbackward-no-xhat-term."""\n'),
        ('            dvar = (dxhat * xmu).sum(axis=0) * -0.5 * (var + self.eps) ** -1.5\n            dmu = (-dxhat * ivar).sum(axis=0) + dvar * (-2.0 * xmu).mean(axis=0)\n            dx = dxhat * ivar + dvar * 2.0 * xmu / n + dmu / n\n',
         '            dmu = (-dxhat * ivar).sum(axis=0)       # the path through the mean; none through var\n            dx = dxhat * ivar + dmu / n\n'),
    ]),
    'backward-no-xhat-term@mlp.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose BatchNorm backward has no path through the variance."""\n'),
        ('        dh = self.istd / n * (n * dxhat - dxhat.sum(0) - self.xhat * (dxhat * self.xhat).sum(0))\n',
         '        dh = self.istd / n * (n * dxhat - dxhat.sum(0))\n'),
    ]),
    'backward-stats-constant@mlp.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose backward treats the batch mean and variance as constants."""\n'),
        ('        dh = self.istd / n * (n * dxhat - dxhat.sum(0) - self.xhat * (dxhat * self.xhat).sum(0))\n',
         '        dh = self.istd * dxhat\n'),
    ]),
    'backward-stats-constant@transformer_block.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block whose LayerNorm backward treats the mean and the variance as constants."""\n'),
        ('        return (C * gx - gx.sum(-1, keepdims=True)\n                - self.xn * (gx * self.xn).sum(-1, keepdims=True)) / (C * self.sigma)\n',
         '        return gx / self.sigma\n'),
    ]),
    'bias-grad-averaged.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose bias gradients are means over the batch (1 / N twice)."""\n'),
        ('        self.b2.grad += dlogits.sum(0)\n',
         '        self.b2.grad += dlogits.mean(0)\n'),
        ('        self.b1.grad += dh.sum(0)\n',
         '        self.b1.grad += dh.mean(0)\n'),
    ]),
    'block-norm-backward-skipped.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A Post-Norm block whose backward takes the LayerNorm for its affine part: dgamma and\ndbeta are right, but the gradient at the residual sum is dy * gamma."""\n'),
        ('            g = self.norm_backward(dy)\n',
         '            self.norm_backward(dy)\n            g = dy * self.gamma.data\n'),
    ]),
    'block-norm-backward-skipped@functions.py': ('transformer_block_functions.py', [
        ('"""Test fixture: a correct TransformerBlock in the cs231n style.\n\nEach layer is a pair of functions, the forward returning a cache and the backward every\ngradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use\ntensordot, ReLU is np.where. The grader must pass it.\n"""\n',
         '"""Test fixture: a cs231n-style Post-Norm block that passes the gradient straight through\nthe LayerNorm, as if it were the identity (and so never computes dgamma, dbeta)."""\n'),
        ('            dz, dgamma, dbeta = layernorm_backward(dy, self.ln_cache)\n',
         '            dz, dgamma, dbeta = dy, 0.0, 0.0\n'),
    ]),
    'block-norm-on-branch-output.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A Pre-Norm block written as x + LN(F(x)), with the backward that goes with it."""\n'),
        ('            out = x + self.ffn(self.norm(x))\n',
         '            out = x + self.norm(self.ffn(x))\n'),
        ('            dx = dy + self.norm_backward(self.ffn_backward(dy))\n',
         '            dx = dy + self.ffn_backward(self.norm_backward(dy))\n'),
    ]),
    'block-pre-post-swapped.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block with the two positions swapped: \'pre\' normalises the residual sum,\n\'post\' the sub-layer\'s input."""\n'),
        ('        if self.position == "pre":\n            out =',
         '        if self.position == "post":\n            out ='),
        ('        if self.position == "pre":\n            dx =',
         '        if self.position == "post":\n            dx ='),
    ]),
    'block-relu-mask-missing.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block whose feed-forward backward forgets ReLU\'s mask."""\n'),
        ('        g = (g @ self.w2.data.T) * (self.pre_act > 0)\n',
         '        g = g @ self.w2.data.T\n'),
    ]),
    'block-relu-mask-missing@loops.py': ('transformer_block_loops.py', [
        ('"""Test fixture: a correct TransformerBlock written with Python loops over the rows (tokens):\none token\'s LayerNorm and feed-forward at a time, np.outer for the weight gradients. The\ngrader must pass it.\n"""\n',
         '"""Test fixture: a residual block written with Python loops over the rows (tokens) whose\nfeed-forward backward forgets ReLU\'s mask, block-relu-mask-missing."""\n'),
        ('        da = (self.w2.data @ g) * (a > 0)\n',
         "        da = self.w2.data @ g                       # ReLU's mask forgotten\n"),
    ]),
    'block-residual-grad-dropped.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block whose backward keeps only the branch\'s gradient, in both positions:\nthe skip connection\'s dy (dz) is not added to dx."""\n'),
        ('            dx = dy + self.norm_backward(self.ffn_backward(dy))\n',
         '            dx = self.norm_backward(self.ffn_backward(dy))\n'),
        ('            dx = g + self.ffn_backward(g)\n',
         '            dx = self.ffn_backward(g)\n'),
    ]),
    'block-residual-grad-dropped@functions.py': ('transformer_block_functions.py', [
        ('"""Test fixture: a correct TransformerBlock in the cs231n style.\n\nEach layer is a pair of functions, the forward returning a cache and the backward every\ngradient; the LayerNorm backward is staged (dvar, dmu), the weight gradients use\ntensordot, ReLU is np.where. The grader must pass it.\n"""\n',
         '"""Test fixture: a cs231n-style residual block (layer functions with caches) whose backward\nreturns the branch\'s gradient only, block-residual-grad-dropped."""\n'),
        ('            dx = dy + dxn\n',
         '            dx = dxn\n'),
        ('            dx = dz + df\n',
         '            dx = df\n'),
    ]),
    'bn-backward-no-gamma.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose backward sends the gradient into x_hat without gamma."""\n'),
        ('        dxhat = dpre * self.gamma.data\n',
         '        dxhat = dpre\n'),
    ]),
    'bn-eval-backward-batch-formula@moveaxis-staged.py': ('batchnorm_staged.py', [
        ('"""Test fixture: a correct BatchNorm1d in the staged (dvar, dmu) style of CS231n.\n\nThe backward goes node by node through the mean and the variance instead of the compact\nformula, and uses the direct term alone in evaluation. The grader must pass it.\n"""\n',
         '"""Test fixture: a staged BatchNorm1d (channels moved last) that uses the training\nbackward in evaluation too, bn-eval-backward-batch-formula."""\n'),
        ('        if training:\n',
         '        if True:  # the training derivation, in evaluation too\n'),
    ]),
    'ce-mean-over-classes.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose cross-entropy is np.mean of onehot * logp over the whole (N, C)\narray, and whose backward follows it.\n"""\n'),
        ('        return (-logp[np.arange(len(targets)), targets].mean()).astype(x.dtype)\n',
         '        self.onehot = np.eye(logits.shape[1])[targets]\n        return (-np.mean(self.onehot * logp)).astype(x.dtype)\n'),
        ('        dlogits *= dloss / n\n',
         '        dlogits *= dloss / self.onehot.size\n'),
    ]),
    'ce-summed-not-averaged@mlp.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose cross-entropy sums over the batch (reduction \'sum\')."""\n'),
        ('        return (-logp[np.arange(len(targets)), targets].mean()).astype(x.dtype)\n',
         '        return (-logp[np.arange(len(targets)), targets].sum()).astype(x.dtype)\n'),
        ('        dlogits *= dloss / n\n',
         '        dlogits *= dloss\n'),
    ]),
    'dparam-wrong-reduction@dyt-einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) whose weight and bias gradients are summed over every element, as\nalpha\'s is: each entry holds the total."""\n'),
        ('        self.weight.grad += np.einsum("nd,nd->d", g, t).reshape(self.shape)\n        self.bias.grad += np.einsum("nd->d", g).reshape(self.shape)\n',
         '        self.weight.grad += np.einsum("nd,nd->", g, t)\n        self.bias.grad += np.einsum("nd->", g)\n'),
    ]),
    'dparam-wrong-reduction@mlp.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose dgamma and dbeta are averaged over the batch."""\n'),
        ('        self.gamma.grad += (dpre * self.xhat).sum(0)\n        self.beta.grad += dpre.sum(0)\n',
         '        self.gamma.grad += (dpre * self.xhat).mean(0)\n        self.beta.grad += dpre.mean(0)\n'),
    ]),
    'dparam-wrong-reduction@transformer_block.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block whose LayerNorm averages dgamma and dbeta over the rows instead of\nsumming them."""\n'),
        ('        self.gamma.grad += (g2 * xn2).sum(0)\n        self.beta.grad += g2.sum(0)\n',
         '        self.gamma.grad += (g2 * xn2).mean(0)\n        self.beta.grad += g2.mean(0)\n'),
    ]),
    'dw-from-pre-activation.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose second weight gradient uses tanh\'s input, not its output."""\n'),
        ('        self.a = np.tanh(self.gamma.data * self.xhat + self.beta.data)\n',
         '        self.z = self.gamma.data * self.xhat + self.beta.data\n        self.a = np.tanh(self.z)\n'),
        ('        self.w2.grad += self.a.T @ dlogits\n',
         '        self.w2.grad += self.z.T @ dlogits\n'),
    ]),
    'dyt-backward-no-gamma@loops.py': ('dyt_loops.py', [
        ('"""Test fixture: a correct DyT written with Python loops over the rows and the elements of\neach row (math.tanh one value at a time), the gradients summed into local accumulators and\nadded to the Parameters at the end. The grader must pass it.\n"""\n',
         '"""A DyT written with loops whose backward sends dy into tanh without the factor gamma."""\n'),
        ('                du = g[i, j] * gamma[j] * (1.0 - t[i, j] ** 2)\n',
         '                du = g[i, j] * (1.0 - t[i, j] ** 2)\n'),
    ]),
    'dyt-dalpha-missing-x@loops.py': ('dyt_loops.py', [
        ('"""Test fixture: a correct DyT written with Python loops over the rows and the elements of\neach row (math.tanh one value at a time), the gradients summed into local accumulators and\nadded to the Parameters at the end. The grader must pass it.\n"""\n',
         '"""A DyT written with loops whose dalpha adds up du alone, without the factor x."""\n'),
        ('                dalpha += du * rows[i, j]\n',
         '                dalpha += du\n'),
    ]),
    'dyt-dalpha-not-summed@per-channel-einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) with alpha per channel, one value per element of normalized_shape,\nand its gradient summed over the rows only."""\n'),
        ('        self.alpha = Parameter(np.array([alpha_init], dtype=dtype))\n',
         '        self.alpha = Parameter(np.full(self.shape, alpha_init, dtype=dtype))\n'),
        ('        self.u = self.alpha.data[0] * x\n',
         '        self.u = self.alpha.data * x\n'),
        ('        self.alpha.grad += np.einsum("nd,nd->", gu, x)\n        return (self.alpha.data[0] * gu)',
         '        self.alpha.grad += np.einsum("nd,nd->d", gu, x).reshape(self.shape)\n        return (self.alpha.data.reshape(d) * gu)'),
    ]),
    'dyt-dbeta-not-summed@einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) whose bias gradient is the mean of dy over the rows, not the sum."""\n'),
        ('        self.bias.grad += np.einsum("nd->d", g).reshape(self.shape)\n',
         '        self.bias.grad += g.mean(axis=0).reshape(self.shape)\n'),
    ]),
    'dyt-dgamma-from-input@einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) whose weight gradient sums dy * x, the input, instead of dy * t."""\n'),
        ('        self.weight.grad += np.einsum("nd,nd->d", g, t).reshape(self.shape)\n',
         '        self.weight.grad += np.einsum("nd,nd->d", g, x).reshape(self.shape)\n'),
    ]),
    'dyt-dx-missing-alpha@einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) whose dx stops at u = alpha * x: the factor alpha is missing."""\n'),
        ('        return (self.alpha.data[0] * gu).reshape(dy.shape).astype(dy.dtype)\n',
         '        return gu.reshape(dy.shape).astype(dy.dtype)\n'),
    ]),
    'dyt-gamma-inside-tanh@loops.py': ('dyt_loops.py', [
        ('"""Test fixture: a correct DyT written with Python loops over the rows and the elements of\neach row (math.tanh one value at a time), the gradients summed into local accumulators and\nadded to the Parameters at the end. The grader must pass it.\n"""\n',
         '"""A DyT written with loops that computes tanh(alpha * gamma * x) + beta, gamma inside the\ntanh, with the backward derived for that forward."""\n'),
        ('                t[i, j] = math.tanh(a * rows[i, j])\n                y[i, j] = gamma[j] * t[i, j] + beta[j]\n',
         '                t[i, j] = math.tanh(a * gamma[j] * rows[i, j])\n                y[i, j] = t[i, j] + beta[j]\n'),
        ('                dgamma[j] += g[i, j] * t[i, j]\n                dbeta[j] += g[i, j]\n                du = g[i, j] * gamma[j] * (1.0 - t[i, j] ** 2)\n                dalpha += du * rows[i, j]\n                dx[i, j] = a * du\n',
         '                dbeta[j] += g[i, j]\n                du = g[i, j] * (1.0 - t[i, j] ** 2)       # d/d(alpha * gamma * x)\n                dgamma[j] += du * a * rows[i, j]\n                dalpha += du * gamma[j] * rows[i, j]\n                dx[i, j] = a * gamma[j] * du\n'),
    ]),
    'dyt-tanh-derivative-from-input@loops.py': ('dyt_loops.py', [
        ('"""Test fixture: a correct DyT written with Python loops over the rows and the elements of\neach row (math.tanh one value at a time), the gradients summed into local accumulators and\nadded to the Parameters at the end. The grader must pass it.\n"""\n',
         '"""A DyT written with loops whose tanh backward uses 1 - x**2, tanh\'s input squared."""\n'),
        ('                du = g[i, j] * gamma[j] * (1.0 - t[i, j] ** 2)\n',
         '                du = g[i, j] * gamma[j] * (1.0 - rows[i, j] ** 2)\n'),
    ]),
    'eps-outside-sqrt@transformer_block.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block whose LayerNorm adds eps outside the square root."""\n'),
        ('        sigma = np.sqrt(u.var(-1, keepdims=True) + self.eps)\n',
         '        sigma = np.sqrt(u.var(-1, keepdims=True)) + self.eps\n'),
    ]),
    'grad-assigned@attention.py': ('attention_einsum.py', [
        ('"""Test fixture: a correct multi-head self-attention written with einsum on (B, T, H, D) arrays\n(the heads never moved in front), the mask added as a triangle of -inf and the 1 / sqrt(D)\nfolded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention that assigns the weight gradients instead of adding into them."""\n'),
        ('        self.wo.grad += o.reshape(-1, C).T @ dy.reshape(-1, C)\n',
         '        self.wo.grad = o.reshape(-1, C).T @ dy.reshape(-1, C)\n'),
        ('        self.wq.grad += rows @ dq.reshape(-1, C)\n        self.wk.grad += rows @ dk.reshape(-1, C)\n        self.wv.grad += rows @ dv.reshape(-1, C)\n',
         '        self.wq.grad = rows @ dq.reshape(-1, C)\n        self.wk.grad = rows @ dk.reshape(-1, C)\n        self.wv.grad = rows @ dv.reshape(-1, C)\n'),
    ]),
    'grad-assigned@dyt-einsum.py': ('dyt_einsum.py', [
        ('"""Test fixture: a correct DyT written with np.einsum on the rows flattened to (n, d), the\nparameters named weight and bias, alpha read as alpha.data[0], and tanh\'s slope written as\n1 / cosh(u)**2 instead of 1 - t**2. The grader must pass it.\n"""\n',
         '"""A DyT (einsum) that assigns its parameter gradients instead of adding into them."""\n'),
        ('        self.weight.grad += np.einsum("nd,nd->d", g, t).reshape(self.shape)\n        self.bias.grad += np.einsum("nd->d", g).reshape(self.shape)\n',
         '        self.weight.grad = np.einsum("nd,nd->d", g, t).reshape(self.shape)\n        self.bias.grad = np.einsum("nd->d", g).reshape(self.shape)\n'),
        ('        self.alpha.grad += np.einsum("nd,nd->", gu, x)\n',
         '        self.alpha.grad = np.einsum("nd,nd->", gu, x)\n'),
    ]),
    'grad-assigned@mlp.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose backward assigns the parameter gradients instead of adding."""\n'),
        ('        self.w2.grad += self.a.T @ dlogits\n        self.b2.grad += dlogits.sum(0)\n',
         '        self.w2.grad = self.a.T @ dlogits\n        self.b2.grad = dlogits.sum(0)\n'),
        ('        self.gamma.grad += (dpre * self.xhat).sum(0)\n        self.beta.grad += dpre.sum(0)\n',
         '        self.gamma.grad = (dpre * self.xhat).sum(0)\n        self.beta.grad = dpre.sum(0)\n'),
        ('        self.w1.grad += self.x.T @ dh\n        self.b1.grad += dh.sum(0)\n',
         '        self.w1.grad = self.x.T @ dh\n        self.b1.grad = dh.sum(0)\n'),
    ]),
    'grad-assigned@transformer_block.py': ('transformer_block_compact.py', [
        ('"""Test fixture: a correct residual block, Pre-Norm or Post-Norm, in a compact style (rows\nflattened, the LayerNorm and the feed-forward as methods with their own caches). The grader\nmust pass it."""\n',
         '"""A residual block that assigns its parameter gradients instead of accumulating them."""\n'),
        ('        self.gamma.grad += (g2 * xn2).sum(0)\n        self.beta.grad += g2.sum(0)\n',
         '        self.gamma.grad = (g2 * xn2).sum(0)\n        self.beta.grad = g2.sum(0)\n'),
        ('        self.w2.grad += self.act.reshape(-1, F).T @ g.reshape(-1, C)\n        self.b2.grad += g.reshape(-1, C).sum(0)\n',
         '        self.w2.grad = self.act.reshape(-1, F).T @ g.reshape(-1, C)\n        self.b2.grad = g.reshape(-1, C).sum(0)\n'),
        ('        self.w1.grad += self.h.reshape(-1, C).T @ g.reshape(-1, F)\n        self.b1.grad += g.reshape(-1, F).sum(0)\n',
         '        self.w1.grad = self.h.reshape(-1, C).T @ g.reshape(-1, F)\n        self.b1.grad = g.reshape(-1, F).sum(0)\n'),
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
    'tanh-derivative-from-input@mlp-pre-bn.py': ('mlp_with_batchnorm_compact.py', [
        ('"""Test fixture: a correct MLP with BatchNorm in a compact style (the whole backward in a few\nlines, BatchNorm\'s in its compact form). The grader must pass it."""\n',
         '"""An MLP with BatchNorm whose tanh backward uses 1 - h**2 with h = x @ w1 + b1, the input of\nthe BatchNorm, instead of 1 - a**2.\n"""\n'),
        ('        hpre = x @ self.w1.data + self.b1.data\n',
         '        hpre = x @ self.w1.data + self.b1.data\n        self.hpre = hpre\n'),
        ('        dpre = (dlogits @ self.w2.data.T) * (1 - self.a ** 2)\n',
         '        dpre = (dlogits @ self.w2.data.T) * (1 - self.hpre ** 2)\n'),
    ]),
    'attn-no-scale@qk-norm-einsum.py': ('qk_norm_einsum.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm written with einsum on (B, T, H, D)\narrays (the heads never moved in front), the norm as two small functions, the mask added as a\ntriangle of -inf and the 1 / sqrt(D) folded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with RMSNorm QK-norm (einsum) whose scores are never divided by sqrt(D)."""\n'),
        ('        s = np.einsum("bihd,bjhd->bhij", q, k) * D ** -0.5\n',
         '        s = np.einsum("bihd,bjhd->bhij", q, k)\n'),
        ('        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5\n',
         '        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))\n'),
    ]),
    'qk-norm-over-d-model@einsum.py': ('qk_norm_einsum.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm written with einsum on (B, T, H, D)\narrays (the heads never moved in front), the norm as two small functions, the mask added as a\ntriangle of -inf and the 1 / sqrt(D) folded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (einsum) whose RMS runs over the heads and the channels of a\nposition, the whole d_model, in the forward and the backward."""\n'),
        ('    r = 1.0 / np.sqrt(np.mean(t * t, axis=-1, keepdims=True) + eps)\n',
         '    r = 1.0 / np.sqrt(np.mean(t * t, axis=(-2, -1), keepdims=True) + eps)\n'),
        ('    return r * (dt_hat - t_hat * np.mean(dt_hat * t_hat, axis=-1, keepdims=True))\n',
         '    return r * (dt_hat - t_hat * np.mean(dt_hat * t_hat, axis=(-2, -1), keepdims=True))\n'),
    ]),
    'grad-assigned@qk-norm-einsum.py': ('qk_norm_einsum.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm written with einsum on (B, T, H, D)\narrays (the heads never moved in front), the norm as two small functions, the mask added as a\ntriangle of -inf and the 1 / sqrt(D) folded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (einsum) that assigns every parameter gradient instead of adding it."""\n'),
        ('    param.grad += np.einsum("bthd,bthd->d", dn, t_hat)\n',
         '    param.grad = np.einsum("bthd,bthd->d", dn, t_hat)\n'),
        ('        self.wo.grad += o.reshape(-1, C).T @ dy.reshape(-1, C)\n',
         '        self.wo.grad = o.reshape(-1, C).T @ dy.reshape(-1, C)\n'),
        ('        self.wq.grad += rows @ dq.reshape(-1, C)\n',
         '        self.wq.grad = rows @ dq.reshape(-1, C)\n'),
        ('        self.wk.grad += rows @ dk.reshape(-1, C)\n',
         '        self.wk.grad = rows @ dk.reshape(-1, C)\n'),
        ('        self.wv.grad += rows @ dv.reshape(-1, C)\n',
         '        self.wv.grad = rows @ dv.reshape(-1, C)\n'),
    ]),
    'qk-norm-after-scale@einsum.py': ('qk_norm_einsum.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm written with einsum on (B, T, H, D)\narrays (the heads never moved in front), the norm as two small functions, the mask added as a\ntriangle of -inf and the 1 / sqrt(D) folded into dscores. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (einsum) that scales q by 1 / sqrt(D) and then normalises it."""\n'),
        ('        q, sq = rms_forward((x @ wq).reshape(B, T, H, D), gq, eps)\n',
         '        q, sq = rms_forward((x @ wq).reshape(B, T, H, D) * D ** -0.5, gq, eps)\n'),
        ('        s = np.einsum("bihd,bjhd->bhij", q, k) * D ** -0.5\n',
         '        s = np.einsum("bihd,bjhd->bhij", q, k)\n'),
        ('        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) * D ** -0.5\n',
         '        ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True))\n'),
        ('        dq = rms_backward(dqn, gq, sq, self.gamma_q).reshape(B, T, C)\n',
         '        dq = rms_backward(dqn, gq, sq, self.gamma_q).reshape(B, T, C) * D ** -0.5\n'),
    ]),
    'qk-norm-backward-skipped@head-loops.py': ('qk_norm_head_loops.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm that loops over the heads, slicing\nhead h\'s D channels out of q and k, normalising them with their root mean square and sending\nthe gradient back through RMSNorm\'s backward head by head. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (a loop over the heads) whose backward treats the norms as the\nidentity: dq and dk are the gradients of the normalised q and k."""\n'),
        ('            dQ[..., c] = rq * (dq_hat - q_hat * (dq_hat * q_hat).sum(-1, keepdims=True) / D)\n',
         '            dQ[..., c] = dqn\n'),
        ('            dK[..., c] = rk * (dk_hat - k_hat * (dk_hat * k_hat).sum(-1, keepdims=True) / D)\n',
         '            dK[..., c] = dkn\n'),
    ]),
    'qk-norm-one-side@head-loops.py': ('qk_norm_head_loops.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm that loops over the heads, slicing\nhead h\'s D channels out of q and k, normalising them with their root mean square and sending\nthe gradient back through RMSNorm\'s backward head by head. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (a loop over the heads) that normalises the queries only."""\n'),
        ('            kn = k * rk * self.gamma_k.data.astype(x.dtype)\n',
         '            kn = k\n'),
        ('            self.gamma_k.grad += (dkn * k_hat).sum(axis=(0, 1))\n',
         ''),
        ('            dK[..., c] = rk * (dk_hat - k_hat * (dk_hat * k_hat).sum(-1, keepdims=True) / D)\n',
         '            dK[..., c] = dkn\n'),
    ]),
    'qk-norm-dgamma-head-mean@head-loops.py': ('qk_norm_head_loops.py', [
        ('"""Test fixture: a correct self-attention with RMSNorm QK-norm that loops over the heads, slicing\nhead h\'s D channels out of q and k, normalising them with their root mean square and sending\nthe gradient back through RMSNorm\'s backward head by head. The grader must pass it.\n"""\n',
         '"""Self-attention with QK-norm (a loop over the heads) that averages the heads\' shares of\ngamma_q\'s and gamma_k\'s gradients."""\n'),
        ('            self.gamma_q.grad += (dqn * q_hat).sum(axis=(0, 1))\n',
         '            self.gamma_q.grad += (dqn * q_hat).sum(axis=(0, 1)) / self.h\n'),
        ('            self.gamma_k.grad += (dkn * k_hat).sum(axis=(0, 1))\n',
         '            self.gamma_k.grad += (dkn * k_hat).sum(axis=(0, 1)) / self.h\n'),
    ]),
    'var-unbiased-in-normalization@mlp-staged.py': ('mlp_with_batchnorm_staged.py', [
        ('"""Test fixture: a correct MLPWithBatchNorm, staged node by node in the makemore style.\n\nThe cross-entropy goes through probs, counts and the max of the logits instead of the fused\ngradient, and the BatchNorm backward through bndiff2, bnvar and bnmeani instead of the\ncompact formula. The grader must pass it.\n',
         '"""An MLP with BatchNorm, staged node by node (makemore style), normalising with Bessel\'s\ncorrection 1 / (n - 1) in training, in the forward and consistently in the backward.\n'),
        ('        self.bnvar = 1 / n * self.bndiff2.sum(0, keepdims=True)\n',
         '        self.bnvar = 1 / (n - 1) * self.bndiff2.sum(0, keepdims=True)\n'),
        ('        dbndiff2 = (1 / n * np.ones_like(self.bndiff2)) * dbnvar\n',
         '        dbndiff2 = (1 / (n - 1) * np.ones_like(self.bndiff2)) * dbnvar\n'),
    ]),
    'fold-bias-not-centred@loops.py': ('fold_batchnorm_loops.py', [
        ('"""Test fixture: a correct fold written one output feature at a time: row j of the weight and\nentry j of the bias scaled by gamma_j / sqrt(running_var_j + eps). The grader must pass it.\n"""\n',
         '"""A fold, one feature at a time, whose bias is scaled and shifted by beta but not centred."""\n'),
        ('        b_new[j] = (b[j] - running_mean[j]) * scale + beta[j]\n',
         '        b_new[j] = b[j] * scale + beta[j]\n'),
    ]),
    'fold-bias-dropped@loops.py': ('fold_batchnorm_loops.py', [
        ('"""Test fixture: a correct fold written one output feature at a time: row j of the weight and\nentry j of the bias scaled by gamma_j / sqrt(running_var_j + eps). The grader must pass it.\n"""\n',
         '"""A fold, one feature at a time, that leaves the Linear\'s own bias out."""\n'),
        ('        b_new[j] = (b[j] - running_mean[j]) * scale + beta[j]\n',
         '        b_new[j] = beta[j] - running_mean[j] * scale\n'),
    ]),
    'eps-outside-sqrt@fold-loops.py': ('fold_batchnorm_loops.py', [
        ('"""Test fixture: a correct fold written one output feature at a time: row j of the weight and\nentry j of the bias scaled by gamma_j / sqrt(running_var_j + eps). The grader must pass it.\n"""\n',
         '"""A fold, one feature at a time, dividing by sqrt(running_var) + eps."""\n'),
        ('        scale = gamma[j] / math.sqrt(running_var[j] + eps)\n',
         '        scale = gamma[j] / (math.sqrt(running_var[j]) + eps)\n'),
    ]),
    'fold-scale-on-columns@diag.py': ('fold_batchnorm_diag.py', [
        ('"""Test fixture: a correct fold written with matrices: the BatchNorm in evaluation as the affine\nmap z -> D (z - running_mean) + beta with D = diag(gamma / sqrt(running_var + eps)), composed with\nthe Linear. The grader must pass it.\n"""\n',
         '"""A fold with matrices that multiplies the weight by diag(s) on the wrong side (W @ D)."""\n'),
        ('    return D @ W, D @ (b - running_mean) + beta\n',
         '    return W @ D, D @ (b - running_mean) + beta\n'),
    ]),
    'fold-beta-missing@diag.py': ('fold_batchnorm_diag.py', [
        ('"""Test fixture: a correct fold written with matrices: the BatchNorm in evaluation as the affine\nmap z -> D (z - running_mean) + beta with D = diag(gamma / sqrt(running_var + eps)), composed with\nthe Linear. The grader must pass it.\n"""\n',
         '"""A fold with matrices that forgets the BatchNorm\'s beta."""\n'),
        ('    return D @ W, D @ (b - running_mean) + beta\n',
         '    return D @ W, D @ (b - running_mean)\n'),
    ]),
    'bn-eval-squared-var@fold-diag.py': ('fold_batchnorm_diag.py', [
        ('"""Test fixture: a correct fold written with matrices: the BatchNorm in evaluation as the affine\nmap z -> D (z - running_mean) + beta with D = diag(gamma / sqrt(running_var + eps)), composed with\nthe Linear. The grader must pass it.\n"""\n',
         '"""A fold with matrices that squares running_var as if it were a standard deviation."""\n'),
        ('    D = np.diag(gamma * (running_var + eps) ** -0.5)\n',
         '    D = np.diag(gamma * (running_var ** 2 + eps) ** -0.5)\n'),
    ]),
    'sync-bn-variances-averaged@chan.py': ('sync_batchnorm_chan.py', [
        ('"""Test fixture: a correct SyncBatchNorm with ONE forward round: every worker writes its\n(n_k, mean_k, M2_k) into its own slot of a K x (1 + 2C) vector of zeros, so the all-reduced sum\nis every worker\'s statistics side by side (an all-gather), and each worker merges them with\nChan\'s parallel formula, stable at any mean. The backward all-reduces the sums of dy * gamma and\ndy * gamma * x_hat. The grader must pass it.\n"""\n',
         '"""SyncBatchNorm (one round, Chan\'s merge) that adds the workers\' M2 but not the spread of their means."""\n'),
        ('            m2 = m2 + m2_b + delta ** 2 * n * n_b / total\n',
         '            m2 = m2 + m2_b\n'),
    ]),
    'sync-bn-backward-not-reduced@chan.py': ('sync_batchnorm_chan.py', [
        ('"""Test fixture: a correct SyncBatchNorm with ONE forward round: every worker writes its\n(n_k, mean_k, M2_k) into its own slot of a K x (1 + 2C) vector of zeros, so the all-reduced sum\nis every worker\'s statistics side by side (an all-gather), and each worker merges them with\nChan\'s parallel formula, stable at any mean. The backward all-reduces the sums of dy * gamma and\ndy * gamma * x_hat. The grader must pass it.\n"""\n',
         '"""SyncBatchNorm (one round, Chan\'s merge) whose backward uses this worker\'s sums only."""\n'),
        ('        sums = self.group.all_reduce(np.concatenate([g.sum(axis=0), (g * self.xh).sum(axis=0)]))\n',
         '        sums = np.concatenate([g.sum(axis=0), (g * self.xh).sum(axis=0)])\n'),
    ]),
    'sync-bn-unbiased-local-count@staged.py': ('sync_batchnorm_staged.py', [
        ('"""Test fixture: a correct SyncBatchNorm with a staged backward (dvar, then dmean, as in a\nmakemore-style derivation), every sum over the batch an all-reduce of the workers\' sums. The\nforward takes two rounds: [n_k, sum x_k], then the sum of squared deviations from the global\nmean. The grader must pass it.\n"""\n',
         '"""SyncBatchNorm (staged backward) whose running_var is unbiased with the shard\'s own row count."""\n'),
        ('        self.running_var = (1 - m) * self.running_var + m * var * (N / (N - 1))\n',
         '        self.running_var = (1 - m) * self.running_var + m * var * (len(x) / (len(x) - 1))\n'),
    ]),
    'sync-bn-one-round-variance@staged.py': ('sync_batchnorm_staged.py', [
        ('"""Test fixture: a correct SyncBatchNorm with a staged backward (dvar, then dmean, as in a\nmakemore-style derivation), every sum over the batch an all-reduce of the workers\' sums. The\nforward takes two rounds: [n_k, sum x_k], then the sum of squared deviations from the global\nmean. The grader must pass it.\n"""\n',
         '"""SyncBatchNorm (staged backward) with the variance E[x**2] - mean**2 from summed squares."""\n'),
        ('        var = self.group.all_reduce((xmu * xmu).sum(axis=0)) / N\n',
         '        var = self.group.all_reduce((x * x).sum(axis=0)) / N - mu * mu\n'),
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
