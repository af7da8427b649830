"""Folding a BatchNorm (evaluation mode) into the Linear before it, with torch tensors: a
reference answer of the PyTorch track.

Standalone (torch only). In evaluation BatchNorm is a fixed affine map of each feature j,
bn(z)_j = (z_j - running_mean_j) * s_j + beta_j with s = gamma / sqrt(running_var + eps), so
a Linear z = x @ W.T + b (torch.nn.Linear's layout, W is (out, in)) followed by it is one
Linear::

    s  = gamma / sqrt(running_var + eps)          (out,)      eps INSIDE the square root
    W' = s[:, None] * W                           (out, in)   row j (output feature j) times s_j
    b' = s * (b - running_mean) + beta            (out,)

The inputs are tensors (a module's ``linear.weight``, ``bn.running_var``, ...) and are not
changed: new tensors are returned.

A name in brackets at the end of a line, such as ``[bias]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    """(W', b') with x @ W'.T + b' == bn.eval()(x @ W.T + b); W (out, in), the rest (out,)."""
    s = gamma / torch.sqrt(running_var + eps)                           # (out,) [scale]
    W_folded = s[:, None] * W                                           # (out, in) row j times s_j [weight]
    b_folded = s * (b - running_mean) + beta                            # (out,) [bias]
    return W_folded, b_folded
