"""A residual block with its LayerNorm in the Pre-Norm, the Post-Norm or the reordered position,
forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). The block is a Transformer block without its attention: one
feed-forward sub-layer F wrapped in a residual connection and a LayerNorm (torch.nn.LayerNorm
semantics over the last axis: biased variance, eps inside the square root).

A name in brackets at the end of a line, such as ``[position]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class Parameter:
    """A learnable array ``data`` and its gradient ``grad`` (same shape), accumulated with +=."""

    def __init__(self, data):
        self.data = data
        self.grad = np.zeros_like(data)


def rows(a):
    """(*, K) -> (N, K): every leading axis flattened into one axis of rows."""
    return a.reshape(-1, a.shape[-1])


class TransformerBlock:
    """y = x + F(LN(x)) (``position="pre"``), y = LN(x + F(x)) (``position="post"``) or
    y = x + LN(F(x)) (``position="reordered"``).

    Forward, x of shape (*, C) (e.g. (B, T, C)), LN and F acting on the last axis::

        F(h)  = relu(h @ w1 + b1) @ w2 + b2               w1 (C, d_ff), w2 (d_ff, C)
        LN(u) = gamma * (u - mean) * rstd + beta          mean, var over C (biased),
                                                          rstd = 1 / sqrt(var + eps)
        pre:   y = x + F(LN(x))                           the norm on the sub-layer's input,
                                                          the residual stream x never normalised
        post:  z = x + F(x),   y = LN(z)                  the norm on the residual sum
                                                          (the 2017 Transformer's)
        reordered: y = x + LN(F(x))                       the norm on the branch's output,
                                                          the stream never normalised (OLMo 2's)

    Backward. Write G'(g) for G's backward applied to the gradient g at G's output (the
    vector-Jacobian product; it also accumulates G's parameter gradients). A residual add
    u = x + B(x) has two paths from x to u, the identity (Jacobian I) and the branch B, and
    the chain rule adds the paths: du/dx applied to g is g + B'(g). Hence::

        pre:   dx = dy + LN'(F'(dy))        the identity path's dy, plus the branch's: the
                                            gradient goes back through F first, then LN
        post:  dz = LN'(dy)                 the norm is the last operation, so every
                                            gradient goes through its backward first
               dx = dz + F'(dz)             then the residual add, as in pre
        reordered: dx = dy + F'(LN'(dy))    the branch's gradient goes back through LN
                                            first (the branch's last operation), then F

    Dropping the "dy +" (or the "dz +") loses the identity path, the one that carries the
    gradient of a Pre-Norm stack to its first layers untouched. In Post-Norm the norm's
    backward is the whole LayerNorm backward, with its paths through the mean and the
    variance: neither the identity nor a multiplication by gamma.

    F'(dg), with a = h @ w1 + b1 and r = relu(a) cached by the forward::

        dw2 += r^T dg,  db2 += sum(dg)          summed over every row (all leading axes)
        dr  = dg @ w2^T
        da  = dr * (a > 0)                      relu's mask: no gradient where a <= 0
        dw1 += h^T da,  db1 += sum(da)
        dh  = da @ w1^T

    LN'(dy), with x_hat = (u - mean) * rstd cached and dx_hat = dy * gamma (in ``_ln_backward``
    dy and dx are the gradients at the norm's output and input, as in the LayerNorm answer)::

        dgamma += sum(dy * x_hat),  dbeta += sum(dy)     over the leading axes
        du = rstd * (dx_hat - mean_C(dx_hat) - x_hat * mean_C(dx_hat * x_hat))

    Training and evaluation are the same (no dropout).
    """

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5, rng=None):
        if position not in ("pre", "post", "reordered"):
            raise ValueError(f"position must be 'pre', 'post' or 'reordered', got {position!r}")
        self.position = position  # [position]
        self.eps = eps
        rng = np.random.default_rng(rng)
        self.gamma = Parameter(np.ones(d_model))
        self.beta = Parameter(np.zeros(d_model))
        self.w1 = Parameter(rng.standard_normal((d_model, d_ff)) / np.sqrt(d_model))
        self.b1 = Parameter(np.zeros(d_ff))
        self.w2 = Parameter(rng.standard_normal((d_ff, d_model)) / np.sqrt(d_ff))
        self.b2 = Parameter(np.zeros(d_model))

    def forward(self, x):
        if self.position == "pre":
            y = x + self._ffn(self._ln(x))                              # (*, C) [y-pre]
        elif self.position == "reordered":
            y = x + self._ln(self._ffn(x))                              # (*, C) [y-reordered]
        else:
            y = self._ln(x + self._ffn(x))                              # (*, C), z = x + F(x)
        return y.astype(x.dtype)

    def backward(self, dy):
        if self.position == "pre":
            dx = dy + self._ln_backward(self._ffn_backward(dy))         # (*, C) identity + branch [dx-pre]
        elif self.position == "reordered":
            dx = dy + self._ffn_backward(self._ln_backward(dy))         # (*, C) LN' first [dx-reordered]
        else:
            dz = self._ln_backward(dy)                                  # (*, C) through LN first [dz-post]
            dx = dz + self._ffn_backward(dz)                            # (*, C) identity + branch [dx-post]
        return dx.astype(dy.dtype)

    # --- the sub-layer F and its backward -------------------------------------------------------
    def _ffn(self, h):
        a = h @ self.w1.data + self.b1.data                             # (*, d_ff)
        r = np.maximum(a, 0.0)                                          # (*, d_ff)
        self.ffn_cache = (h, a, r)
        return r @ self.w2.data + self.b2.data                          # (*, C)

    def _ffn_backward(self, dg):
        h, a, r = self.ffn_cache
        self.w2.grad += rows(r).T @ rows(dg)                            # (d_ff, C) [dw2]
        self.b2.grad += rows(dg).sum(axis=0)                            # (C,) [db2]
        dr = dg @ self.w2.data.T                                        # (*, d_ff)
        da = dr * (a > 0)                                               # (*, d_ff) [relu-backward]
        self.w1.grad += rows(h).T @ rows(da)                            # (C, d_ff) [dw1]
        self.b1.grad += rows(da).sum(axis=0)                            # (d_ff,) [db1]
        return da @ self.w1.data.T                                      # (*, C)

    # --- the LayerNorm and its backward ---------------------------------------------------------
    def _ln(self, u):
        mean = u.mean(axis=-1, keepdims=True)                           # (*, 1)
        var = ((u - mean) ** 2).mean(axis=-1, keepdims=True)            # (*, 1) biased
        rstd = 1.0 / np.sqrt(var + self.eps)                            # (*, 1) [rstd]
        x_hat = (u - mean) * rstd                                       # (*, C)
        self.ln_cache = (x_hat, rstd)
        return self.gamma.data * x_hat + self.beta.data                 # (*, C)

    def _ln_backward(self, dy):
        x_hat, rstd = self.ln_cache
        lead = tuple(range(dy.ndim - 1))                                # the axes gamma is shared over
        self.gamma.grad += (dy * x_hat).sum(axis=lead)                  # (C,) [dgamma]
        self.beta.grad += dy.sum(axis=lead)                             # (C,) [dbeta]
        dx_hat = dy * self.gamma.data                                   # (*, C)
        mean_dx_hat = dx_hat.mean(axis=-1, keepdims=True)                      # (*, 1)
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=-1, keepdims=True)      # (*, 1)
        dx = rstd * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)         # (*, C) [dx]
        return dx
