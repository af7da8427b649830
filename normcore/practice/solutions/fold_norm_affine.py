"""Folding a norm's gamma and beta into the Linear after it, by hand in NumPy: a reference
answer.

Standalone (numpy only). LayerNorm, RMSNorm and the other norms end with an affine map of
each feature i, applied after their statistics: norm(x)_i = gamma_i * x_hat_i + beta_i. A
Linear y = h @ W.T + b that reads those features then computes, per output j::

    sum_i W_ji (gamma_i x_hat_i + beta_i) + b_j = sum_i (W_ji gamma_i) x_hat_i + (sum_i W_ji beta_i + b_j)

so the pair is the norm without its affine followed by one Linear::

    W' = W @ diag(gamma)                          (out, in)   column i (input feature i) times gamma_i
    b' = W @ beta + b                             (out,)      the original W, not W'

(W @ diag(gamma) is W * gamma[None, :] without the matrix.)

gamma scales the columns of W (the Linear's inputs, which are the norm's features); BatchNorm
folded into the Linear BEFORE it scales rows instead. The division by each sample's standard
deviation (RMSNorm: its root mean square) is not affine and stays in the norm. The inputs are
not changed (new arrays are returned).

A name in brackets at the end of a line, such as ``[bias]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


def fold_norm_affine(gamma, beta, W, b):
    """(W', b') with x_hat @ W'.T + b' == (gamma * x_hat + beta) @ W.T + b; W (out, in),
    gamma and beta (in,), b (out,)."""
    W_folded = W @ np.diag(gamma)                                       # (out, in) column i times gamma_i [weight]
    b_folded = W @ beta + b                                             # (out,) [bias]
    return W_folded, b_folded
