"""Test fixture: a correct fold written one output feature at a time: row j of the weight and
entry j of the bias scaled by gamma_j / sqrt(running_var_j + eps). The grader must pass it.
"""

import math

import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    W_new, b_new = np.empty_like(W), np.empty_like(b)
    for j in range(W.shape[0]):
        scale = gamma[j] / math.sqrt(running_var[j] + eps)
        W_new[j] = W[j] * scale
        b_new[j] = (b[j] - running_mean[j]) * scale + beta[j]
    return W_new, b_new
