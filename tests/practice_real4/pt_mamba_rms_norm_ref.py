"""Mamba's reference RMSNorm (the PyTorch path its Triton kernel is tested against), ported to
the rmsnorm exercise (PyTorch track).

Source: github.com/state-spaces/mamba, mamba_ssm/ops/triton/layer_norm.py (commit 0f12d2c8),
``rms_norm_ref(x, weight, bias, ..., eps=1e-6, ..., upcast=False)``: the inputs are cast to
float32 only when upcast=True; ``rstd = 1 / torch.sqrt((x.square()).mean(dim=-1,
keepdim=True) + eps)``; ``out = (x * rstd * weight + bias if bias is not None else x * rstd *
weight).to(dtype)``. The module is mamba_ssm's RMSNorm (weight, bias registered as None),
whose forward calls the Triton kernel; here it calls the reference with its default upcast.
Port: the skeleton's constructor; the mean over the normalized dims; eps=None as PyTorch's
machine epsilon; the residual/dropout/prenorm arguments dropped (unused by a plain norm).
"""
import torch
from torch import nn


def rms_norm_ref(x, weight, bias, dims=(-1,), eps=1e-6, upcast=False):
    dtype = x.dtype
    if upcast:
        x = x.float()
        weight = weight.float()
        bias = bias.float() if bias is not None else None
    rstd = 1 / torch.sqrt((x.square()).mean(dim=dims, keepdim=True) + eps)
    out = (x * rstd * weight + bias if bias is not None else x * rstd * weight).to(dtype)
    return out


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.register_parameter("bias", None)

    def forward(self, x):
        eps = self.eps
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        return rms_norm_ref(x, self.weight, self.bias, dims=dims, eps=eps)
