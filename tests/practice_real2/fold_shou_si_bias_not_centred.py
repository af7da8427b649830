# 手撕 BN 融合：把 eval 模式下的 BatchNorm1d 合并进前面的 Linear
import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    # 每个输出通道的缩放系数
    s = gamma / np.sqrt(running_var + eps)
    # W' = diag(s) @ W，按行缩放
    W_new = W * s[:, None]
    # b' = s * b + beta
    b_new = s * b + beta
    return W_new, b_new
