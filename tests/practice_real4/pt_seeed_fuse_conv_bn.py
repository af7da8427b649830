"""A copy of the tehnokv conv + BatchNorm fusion in Seeed Studio's ModelAssistant, ported to
the fold_batchnorm exercise (PyTorch track).

Source: github.com/Seeed-Studio/ModelAssistant, edgelab/models/layers/test.py, fuse(conv,
bn): the weights as in the post (``w_bn = torch.diag(bn.weight.div(torch.sqrt(bn.eps +
bn.running_var)))``, ``torch.mm(w_bn, w_conv)``), ``b_bn = bn.bias -
bn.weight.mul(bn.running_mean).div(torch.sqrt(bn.running_var + bn.eps))``, but the bias
``fused.bias.copy_(b_conv + b_bn)``: the convolution's bias is added without the scale w_bn.
Port: the skeleton's fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps) on a
Linear's (out, in) weight; the fused tensors returned instead of copied into a Conv2d.
"""
import torch


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    # setting weights
    w_conv = W.clone().view(W.size(0), -1)
    w_bn = torch.diag(gamma.div(torch.sqrt(eps + running_var)))
    fused_weight = torch.mm(w_bn, w_conv).view(W.size())

    # setting bias
    if b is not None:
        b_conv = b
    else:
        b_conv = torch.zeros(W.size(0))
    b_bn = beta - gamma.mul(running_mean).div(torch.sqrt(running_var + eps))
    fused_bias = b_conv + b_bn

    return fused_weight, fused_bias
