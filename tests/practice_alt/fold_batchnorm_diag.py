"""Test fixture: a correct fold written with matrices: the BatchNorm in evaluation as the affine
map z -> D (z - running_mean) + beta with D = diag(gamma / sqrt(running_var + eps)), composed with
the Linear. The grader must pass it.
"""

import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    D = np.diag(gamma * (running_var + eps) ** -0.5)
    return D @ W, D @ (b - running_mean) + beta
