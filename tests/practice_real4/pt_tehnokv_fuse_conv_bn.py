"""The conv + BatchNorm fusion of the tehnokv.com post "Fusing batch normalization and
convolution in runtime", as copied into a repository, ported to the fold_batchnorm exercise.

Source: github.com/hisrg/Onnx-python, ConvBNFuse-1.py, fuse_conv_and_bn(conv, bn) (the
post's code, tehnokv.com/posts/fusing-batchnorm-and-conv): ``w_conv =
conv.weight.clone().view(conv.out_channels, -1)``; ``w_bn =
torch.diag(bn.weight.div(torch.sqrt(bn.eps+bn.running_var)))``; ``torch.mm(w_bn, w_conv)``;
``b_bn = bn.bias - bn.weight.mul(bn.running_mean).div(torch.sqrt(bn.running_var +
bn.eps))``; ``torch.matmul(w_bn, b_conv) + b_bn``.
Port: the skeleton's fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps) on a
Linear's (out, in) weight (a 1x1 convolution); the fused tensors returned instead of copied
into a new Conv2d.
"""
import torch


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    # prepare filters
    w_conv = W.clone().view(W.size(0), -1)
    w_bn = torch.diag(gamma.div(torch.sqrt(eps + running_var)))
    fused_weight = torch.mm(w_bn, w_conv).view(W.size())
    # prepare spatial bias
    if b is not None:
        b_conv = b
    else:
        b_conv = torch.zeros(W.size(0))
    b_bn = beta - gamma.mul(running_mean).div(torch.sqrt(running_var + eps))
    fused_bias = torch.matmul(w_bn, b_conv) + b_bn
    # we're done
    return fused_weight, fused_bias
