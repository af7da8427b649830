# exercise: fold_batchnorm
# Source: github.com/Robert-JunWang/Pelee, tools/gen_merged_model.py@afe88923 ("copied from
# https://github.com/sanghoon/pva-faster-rcnn/blob/master/tools/gen_merged_model.py"), with
# its module constant "# set eps according to your batch norm setting / EPS = 0.001" used in
# merge_conv_and_bn.
# Ported: as for PVANet's script: the Caffe blobs become the function's arguments (weight W,
# bias b; BatchNorm mean / variance with a moving-average factor of 1; Scale weight / bias as
# gamma / beta), stored in float32 blobs and returned in the inputs' dtype. Kept: alpha =
# scale_weight / np.sqrt(bn_variance / num_bn_samples + EPS) with the module's EPS = 0.001,
# whatever eps the BatchNorm had (the eps argument is accepted and unused).
import numpy as np

# set eps according to your batch norm setting
EPS = 0.001


def merge_conv_and_bn(params, key_conv, key_bn, key_scale):
    # This is based on Kyeheyon's work
    def copy_double(data):
        return np.array(data, copy=True, dtype=np.double)

    # Copy
    bn_mean = copy_double(params[key_bn][0])
    bn_variance = copy_double(params[key_bn][1])
    num_bn_samples = copy_double(params[key_bn][2])

    # and Invalidate the BN layer
    params[key_bn][0][:] = 0
    params[key_bn][1][:] = 1
    params[key_bn][2][:] = 1
    if num_bn_samples[0] == 0:
        num_bn_samples[0] = 1

    if key_scale in params:
        scale_weight = copy_double(params[key_scale][0])
        scale_bias = copy_double(params[key_scale][1])
        params[key_scale][0][:] = 1
        params[key_scale][1][:] = 0
    else:
        scale_weight = 1
        scale_bias = 0

    weight = copy_double(params[key_conv][0])
    bias = copy_double(params[key_conv][1])

    alpha = scale_weight / np.sqrt(bn_variance / num_bn_samples[0] + EPS)
    params[key_conv][1][:] = bias * alpha + (scale_bias - (bn_mean / num_bn_samples[0]) * alpha)
    for i in range(len(alpha)):
        params[key_conv][0][i] = weight[i] * alpha[i]


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    blob = lambda a: np.array(a, dtype=np.float32)  # Caffe blobs hold float32
    params = {
        "fc": [blob(W), blob(b)],
        "fc/bn": [blob(running_mean), blob(running_var), blob([1.0])],
        "fc/scale": [blob(gamma), blob(beta)],
    }
    merge_conv_and_bn(params, "fc", "fc/bn", "fc/scale")
    return params["fc"][0].astype(W.dtype), params["fc"][1].astype(W.dtype)
