# Conv-BN fusion helper as found in inference-export scripts, adapted to a Linear:
# the scale is broadcast against the weight the NumPy way.
import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    std = np.sqrt(running_var + eps)
    t = gamma / std
    fused_w = W * t
    fused_b = beta + (b - running_mean) * t
    return fused_w, fused_b
