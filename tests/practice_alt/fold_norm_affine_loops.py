"""Test fixture: a correct fold of a norm's affine written one output feature at a time: row j
of the folded weight is row j of W times gamma entry by entry, and entry j of the bias adds
row j of W applied to beta. The grader must pass it.
"""

import numpy as np


def fold_norm_affine(gamma, beta, W, b):
    out_features, in_features = W.shape
    W_new = np.empty_like(W)
    b_new = np.empty_like(b)
    for j in range(out_features):
        total = b[j]
        for i in range(in_features):
            W_new[j, i] = W[j, i] * gamma[i]
            total = total + W[j, i] * beta[i]
        b_new[j] = total
    return W_new, b_new
