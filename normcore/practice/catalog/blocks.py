"""Mistakes of the exercises made of several layers: the residual block with its norm and
the small MLP with BatchNorm.
"""

from ...i18n import N_
from .base import Anchor, Mistake, notebook, solution


# The pieces of the reference answers that the mutants replace (see base.Anchor).
BLOCK_POSITION = Anchor("position", "self.position = position")
BLOCK_Y_PRE = Anchor("y-pre", "y = x + self._ffn(self._ln(x))")
BLOCK_DX_PRE = Anchor("dx-pre", "dx = dy + self._ln_backward(self._ffn_backward(dy))")
BLOCK_DZ_POST = Anchor("dz-post", "dz = self._ln_backward(dy)")
BLOCK_DX_POST = Anchor("dx-post", "dx = dz + self._ffn_backward(dz)")
BLOCK_Y_REORDERED = Anchor("y-reordered", "y = x + self._ln(self._ffn(x))")
BLOCK_DX_REORDERED = Anchor("dx-reordered", "dx = dy + self._ffn_backward(self._ln_backward(dy))")
BLOCK_RELU_MASK = Anchor("relu-backward", "da = dr * (a > 0)")
BLOCK_DW1 = Anchor("dw1", "self.w1.grad += rows(h).T @ rows(da)")
BLOCK_DB1 = Anchor("db1", "self.b1.grad += rows(da).sum(axis=0)")
BLOCK_DW2 = Anchor("dw2", "self.w2.grad += rows(r).T @ rows(dg)")
BLOCK_DB2 = Anchor("db2", "self.b2.grad += rows(dg).sum(axis=0)")
MLP_VAR = Anchor("var", "var = ((h - mean) ** 2).mean(axis=0, keepdims=True)")
MLP_DLOGITS = Anchor("dlogits", "dlogits = dloss * (p - onehot) / n")
MLP_SHIFT = Anchor("shift", "z = logits - logits.max(axis=1, keepdims=True)")
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

MISTAKES = [
    Mistake(
        "tanh-derivative-from-input",
        N_("tanh's derivative taken from its input"),
        N_("the loss, dw2 and db2 are right; dgamma, dbeta, dw1 and dx are not: the gradient "
           "through tanh was multiplied by 1 - hbn**2 with tanh's input hbn (or 1 - h**2 with "
           "h, the BatchNorm's input), which can even be negative, where tanh'(hbn) = "
           "1 - tanh(hbn)**2 = 1 - a**2"),
        N_("d tanh(u) / du = 1 - tanh(u)**2: written with tanh's output a, which the forward "
           "already has, not with its input u."),
        {"mlp_with_batchnorm": [  # BatchNorm's output hbn, or the Linear's output h before it
            ((MLP_DHBN, f"dhbn = da * (1.0 - {MLP_HBN} ** 2)"),),
            ((MLP_DHBN, "dhbn = da * (1.0 - (x @ self.w1.data + self.b1.data) ** 2)"),),
        ]},
        taught=solution("mlp_with_batchnorm"),
    ),
    Mistake(
        "bn-backward-no-gamma",
        N_("BatchNorm backward without the factor gamma"),
        N_("dgamma, dbeta and everything above them are right, dh is not (nor dw1, nor dx): "
           "the gradient was sent back into h_hat as dhbn itself instead of dhbn * gamma"),
        N_("hbn = gamma * h_hat + beta, so the gradient reaching h_hat is scaled by gamma: "
           "dh_hat = dhbn * gamma, and the BatchNorm backward starts from dh_hat."),
        {"mlp_with_batchnorm": [((MLP_DH_HAT, "dh_hat = dhbn"),)]},
        taught=solution("mlp_with_batchnorm"),
    ),
    Mistake(
        "dw-from-pre-activation",
        N_("weight gradient from the activation's input instead of its output"),
        N_("only dw2 is wrong: it was computed with tanh's input hbn (the pre-activation), "
           "where the second Linear's input is tanh's output a"),
        N_("A Linear layer's weight gradient is (the layer's input).T @ (its output's gradient); "
           "the second Linear's input is the activation a = tanh(hbn)."),
        {"mlp_with_batchnorm": [((MLP_DW2, f"self.w2.grad += {MLP_HBN}.T @ dlogits"),)]},
        taught=solution("mlp_with_batchnorm"),
    ),
    Mistake(
        "bias-grad-averaged",
        N_("bias gradient averaged over the batch instead of summed"),
        N_("db2 is N times too small, every other gradient is right: the bias's gradient was "
           "the mean of dlogits over the rows, but dlogits already holds the mean's 1 / N, so "
           "the 1 / N is applied twice (db1 is zero either way)"),
        N_("A bias is broadcast over the N rows, so its gradient is the sum of the rows' "
           "gradients; the 1 / N of the mean belongs to dlogits, once."),
        {"mlp_with_batchnorm": [((MLP_DB2, "self.b2.grad += dlogits.mean(axis=0)"),)]},
        taught=solution("mlp_with_batchnorm"),
    ),
    Mistake(
        "block-residual-grad-dropped",
        N_("residual block backward without the identity path's gradient"),
        N_("the forward and every parameter gradient are right, dx is not: it is only the "
           "branch's share, LN'(F'(dy)) in Pre-Norm, F'(dz) in Post-Norm or F'(LN'(dy)) in the "
           "reordered block; the dy (or dz) that the skip connection carries straight back to x "
           "is missing"),
        N_("y = x + B(x) has two paths from x to y and the chain rule adds them: dx = dy + B'(dy). "
           "The identity path's gradient is the point of a residual connection."),
        {"transformer_block": [
            ((BLOCK_DX_PRE, "dx = self._ln_backward(self._ffn_backward(dy))"),),
            ((BLOCK_DX_POST, "dx = self._ffn_backward(dz)"),),
            ((BLOCK_DX_REORDERED, "dx = self._ffn_backward(self._ln_backward(dy))"),),
        ]},
        taught=notebook("interview_practice",
                       N_("9.4 (The residual block: the identity path carries dy)")),
    ),
    Mistake(
        "block-norm-backward-skipped",
        N_("Post-Norm backward that skips the LayerNorm's backward"),
        N_("Pre-Norm is right; in Post-Norm the forward is right but dx and the feed-forward's "
           "gradients are not: the gradient reached the residual sum as dy itself (the norm taken "
           "for the identity, dgamma and dbeta then left at zero) or as dy * gamma (its affine "
           "part only), without rstd and the mean and variance terms"),
        N_("In y = LN(x + F(x)) the norm is the last operation, so the backward starts with its "
           "whole backward, dz = LN'(dy), mean and variance terms included; then the residual "
           "add: dx = dz + F'(dz)."),
        {"transformer_block": [
            ((BLOCK_DZ_POST, "dz = dy"),),
            ((BLOCK_DZ_POST, "self._ln_backward(dy)\n            dz = dy"),),
            ((BLOCK_DZ_POST, "self._ln_backward(dy)\n            dz = dy * self.gamma.data"),),
        ]},
        taught=notebook("interview_practice",
                       N_("9.4 (The residual block: the identity path carries dy)")),
    ),
    Mistake(
        "block-relu-mask-missing",
        N_("feed-forward backward without ReLU's mask"),
        N_("the forward is right; dx, dw1 and db1 are not, in both positions: the gradient "
           "flowed back through the units ReLU switched off (a <= 0), as if the activation were "
           "the identity"),
        N_("relu'(a) is 1 where a > 0 and 0 elsewhere: multiply the gradient at ReLU's output by "
           "the mask a > 0 from the forward, before dw1, db1 and the input's gradient."),
        {"transformer_block": [((BLOCK_RELU_MASK, "da = dr"),)]},
        taught=solution("transformer_block"),
    ),
    Mistake(
        "block-pre-post-swapped",
        N_("Pre-Norm and Post-Norm swapped"),
        N_("every number of Pre-Norm and Post-Norm is the other's: 'pre' computes "
           "LN(x + F(x)), the norm after the residual add (the 2017 Transformer's Post-Norm), and "
           "'post' computes x + F(LN(x))"),
        N_("Pre-Norm normalises the sub-layer's input and leaves the residual stream alone: "
           "y = x + F(LN(x)). Post-Norm normalises the sum: y = LN(x + F(x))."),
        {"transformer_block": [
            ((BLOCK_POSITION, 'self.position = {"pre": "post", "post": "pre"}.get(position, position)'),),
        ]},
        taught=solution("transformer_block"),
    ),
    Mistake(
        "block-norm-on-branch-output",
        N_("Pre-Norm written as x + LN(F(x)), the norm on the branch's output"),
        N_("Post-Norm is right; in Pre-Norm every number is off: the norm was applied to the "
           "sub-layer's output instead of its input (y = x + LN(F(x)), another block: the "
           "reordered norm, Swin v2's res-post-norm), and the backward went through the norm before F"),
        N_("Pre-Norm normalises what goes into the sub-layer: y = x + F(LN(x)). The backward "
           "then goes back through F first and the norm second: dx = dy + LN'(F'(dy))."),
        {"transformer_block": [
            ((BLOCK_Y_PRE, "y = x + self._ln(self._ffn(x))"),
             (BLOCK_DX_PRE, "dx = dy + self._ffn_backward(self._ln_backward(dy))")),
        ]},
        taught=solution("transformer_block"),
    ),
    Mistake(
        "block-reordered-as-pre-norm",
        N_("the reordered norm placed before the branch: Pre-Norm"),
        N_("Pre-Norm and Post-Norm are right; in the reordered block every number is "
           "Pre-Norm's: the norm went on the sub-layer's input, y = x + F(LN(x)), where the "
           "reordered block normalises its output, y = x + LN(F(x))"),
        N_("The reordered norm (OLMo 2's) sits at the end of the branch: y = x + LN(F(x)), so "
           "the backward goes through LN first and F second: dx = dy + F'(LN'(dy))."),
        {"transformer_block": [
            ((BLOCK_Y_REORDERED, "y = x + self._ffn(self._ln(x))"),
             (BLOCK_DX_REORDERED, "dx = dy + self._ln_backward(self._ffn_backward(dy))")),
        ]},
        taught=solution("transformer_block"),
    ),
    Mistake(
        "block-reordered-as-post-norm",
        N_("the reordered norm placed after the residual sum: Post-Norm"),
        N_("Pre-Norm and Post-Norm are right; in the reordered block every number is "
           "Post-Norm's: the norm went on the residual sum, y = LN(x + F(x)), so the stream "
           "itself is normalised, where the reordered block normalises the branch alone, "
           "y = x + LN(F(x))"),
        N_("In the reordered block the residual stream is never normalised: only the branch's "
           "output is, y = x + LN(F(x)), and dx = dy + F'(LN'(dy)) keeps the identity path's dy."),
        {"transformer_block": [
            ((BLOCK_Y_REORDERED, "y = self._ln(x + self._ffn(x))"),
             (BLOCK_DX_REORDERED, "dz = self._ln_backward(dy)\n            dx = dz + self._ffn_backward(dz)")),
        ]},
        taught=solution("transformer_block"),
    ),
    Mistake(
        "block-reordered-backward-in-pre-order",
        N_("the reordered block's backward in Pre-Norm's order"),
        N_("the forward is right, and Pre-Norm and Post-Norm; in the reordered block dx and the "
           "parameter gradients are not: the backward went through F first and LN second, "
           "LN'(F'(dy)), Pre-Norm's order, where the forward applied F first"),
        N_("The backward undoes the forward in reverse: y = x + LN(F(x)) applies LN last, so its "
           "backward comes first: dx = dy + F'(LN'(dy))."),
        {"transformer_block": [
            ((BLOCK_DX_REORDERED, "dx = dy + self._ln_backward(self._ffn_backward(dy))"),),
        ]},
        taught=solution("transformer_block"),
    ),
]
