# exercise: fold_batchnorm
# Source: github.com/Tencent/ncnn, tools/ncnnoptimize.cpp, NetOptimize::fuse_innerproduct_batchnorm
# (with the a / b coefficients of src/layer/batchnorm.cpp: b = slope / sqrt(var + eps),
# a = bias - slope * mean / sqrt(var + eps)).
# Ported from C++ to NumPy: the InnerProduct's weight_data (num_output rows of
# weight_per_outch) is W, bias_data is b (a Linear without bias gets zeros, as ncnn's
# "init bias" branch does), the BatchNorm's slope/mean/var/bias data are gamma / running_mean /
# running_var / beta. Kept: everything in float32, as ncnn's Mat stores it, loop by loop; the
# result is written back into the caller's dtype at the end, as the model file is.
import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    channels = W.shape[0]
    weight_per_outch = W.shape[1]
    slope_data = np.array(gamma, dtype=np.float32)
    mean_data = np.array(running_mean, dtype=np.float32)
    var_data = np.array(running_var, dtype=np.float32)
    bias_data_bn = np.array(beta, dtype=np.float32)
    eps = np.float32(eps)

    # a = bias - slope * mean / sqrt(var + eps)
    # b = slope / sqrt(var + eps)
    # value = value * b + a
    a = np.zeros(channels, dtype=np.float32)
    bb = np.zeros(channels, dtype=np.float32)
    for i in range(channels):
        sqrt_var = np.float32(np.sqrt(var_data[i] + eps))
        a[i] = bias_data_bn[i] - slope_data[i] * mean_data[i] / sqrt_var
        bb[i] = slope_data[i] / sqrt_var

    weight = np.array(W, dtype=np.float32).reshape(-1)
    bias = np.array(b, dtype=np.float32)
    for i in range(channels):
        conv_weight_outch = weight[weight_per_outch * i: weight_per_outch * (i + 1)]
        for j in range(weight_per_outch):
            conv_weight_outch[j] *= bb[i]

        bias[i] = bias[i] * bb[i] + a[i]

    return weight.reshape(W.shape).astype(W.dtype), bias.astype(W.dtype)
