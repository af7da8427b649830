# Folding BatchNorm into the preceding Linear, computed in float64 and cast back to the
# caller's dtype; the inputs are never written to.
import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    dtype = np.result_type(W, b, running_mean, running_var, gamma, beta)

    def f64(a):
        return np.asarray(a, dtype=np.float64)

    scale = f64(gamma) / np.sqrt(f64(running_var) + eps)          # (out,)
    W_folded = f64(W) * scale[:, None]                             # row j scaled by s_j
    b_folded = (f64(b) - f64(running_mean)) * scale + f64(beta)
    return W_folded.astype(dtype), b_folded.astype(dtype)
