"""Test fixture: a correct fold of a norm's affine written with matrices: the affine as the map
h -> diag(gamma) h + beta, composed with the Linear h -> W h + b. The grader must pass it.
"""

import numpy as np


def fold_norm_affine(gamma, beta, W, b):
    return W @ np.diag(gamma), np.einsum("oi,i->o", W, beta) + b
