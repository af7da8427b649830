"""Folding a norm's gamma and beta into the Linear after it, with torch tensors: a reference
answer of the PyTorch track.

Standalone (torch only). torch.nn.LayerNorm, torch.nn.RMSNorm and the other norms end with an
affine map of each feature i, applied after their statistics: norm(x)_i = gamma_i * x_hat_i +
beta_i (``norm.weight``, ``norm.bias``). A torch.nn.Linear y = h @ W.T + b that reads those
features (W is (out, in)) then computes, per output j::

    sum_i W_ji (gamma_i x_hat_i + beta_i) + b_j = sum_i (W_ji gamma_i) x_hat_i + (sum_i W_ji beta_i + b_j)

so the pair is the norm without its affine (``elementwise_affine=False``) followed by one
Linear::

    W' = W * gamma[None, :]                       (out, in)   column i (input feature i) times gamma_i
    b' = W @ beta + b                             (out,)      the original W, not W'

The inputs are tensors and are not changed: new tensors are returned.

A name in brackets at the end of a line, such as ``[bias]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch  # noqa: F401  (the track is chosen by this import; the arithmetic is the operators')


def fold_norm_affine(gamma, beta, W, b):
    """(W', b') with x_hat @ W'.T + b' == (gamma * x_hat + beta) @ W.T + b; W (out, in),
    gamma and beta (in,), b (out,)."""
    W_folded = W * gamma[None, :]                                       # (out, in) column i times gamma_i [weight]
    b_folded = W @ beta + b                                             # (out,) [bias]
    return W_folded, b_folded
