"""PyTorch's own Linear + BatchNorm fusion, ported to the fold_batchnorm exercise.

Source: github.com/pytorch/pytorch, torch/nn/utils/fusion.py, fuse_linear_bn_weights(
linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b): ``if linear_b is None: linear_b =
torch.zeros_like(bn_rm)``; ``bn_scale = bn_w * torch.rsqrt(bn_rv + bn_eps)``; ``fused_w =
linear_w * bn_scale.unsqueeze(-1)``; ``fused_b = (linear_b - bn_rm) * bn_scale + bn_b``;
both returned as nn.Parameters.
Port: the skeleton's fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps)
calling it with the arguments in torch's order.
"""
import torch


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    if linear_b is None:
        linear_b = torch.zeros_like(bn_rm)
    bn_scale = bn_w * torch.rsqrt(bn_rv + bn_eps)

    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_w.dtype)
    fused_b = (linear_b - bn_rm) * bn_scale + bn_b

    return torch.nn.Parameter(fused_w, linear_w.requires_grad), torch.nn.Parameter(fused_b, linear_b.requires_grad)


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    return fuse_linear_bn_weights(W, b, running_mean, running_var, eps, gamma, beta)
