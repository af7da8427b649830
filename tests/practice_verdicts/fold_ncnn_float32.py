"""ncnn's fusion of a BatchNorm into the layer before it (tools/ncnnoptimize.cpp,
fuse_innerproduct_batchnorm): every weight is a float, so b = slope / sqrt(var + eps) and
a = bias - slope * mean / sqrt(var + eps) are computed in float32, the weights scaled
row by row and the bias set to bias * b + a; returned in the inputs' dtype."""

import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    f = np.float32
    W32, bias = W.astype(f), b.astype(f)
    slope, mean, var, bn_bias = gamma.astype(f), running_mean.astype(f), running_var.astype(f), beta.astype(f)
    sqrt_var = np.sqrt(var + f(eps))
    a = bn_bias - slope * mean / sqrt_var
    bb = slope / sqrt_var
    return (W32 * bb[:, None]).astype(W.dtype), (bias * bb + a).astype(b.dtype)
