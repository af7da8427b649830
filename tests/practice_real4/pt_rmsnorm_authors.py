"""The RMSNorm authors' PyTorch code (Zhang & Sennrich 2019), ported to the rmsnorm exercise.

Source: github.com/bzhangGo/rmsnorm, rmsnorm_torch.py, class RMSNorm(d, p=-1., eps=1e-8,
bias=False): ``norm_x = x.norm(2, dim=-1, keepdim=True)``, ``rms_x = norm_x * d_x ** (-1. /
2)``, ``x_normed = x / (rms_x + self.eps)``, ``self.scale * x_normed``: eps is added to the
RMS, outside the square root.
Port: (normalized_shape, eps=None, elementwise_affine) instead of (d, p, eps, bias); the
scale parameter renamed weight (the skeleton's name); the norm over the normalized dims;
eps=None as PyTorch's machine epsilon (the authors' default is 1e-8). Kept: eps outside the
root, the 2-norm times d ** -1/2, partial RMSNorm (p) and the optional offset.
"""
import torch
import torch.nn as nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, p=-1., bias=False):
        """
            Root Mean Square Layer Normalization
        :param normalized_shape: model size (the skeleton's name for d)
        :param p: partial RMSNorm, valid value [0, 1], default -1.0 (disabled)
        :param eps:  epsilon value
        :param bias: whether use bias term for RMSNorm, disabled by
            default because RMSNorm doesn't enforce re-centering invariance.
        """
        super(RMSNorm, self).__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.d = 1
        for n in self.normalized_shape:
            self.d *= n
        self.p = p
        self.bias = bias

        self.weight = nn.Parameter(torch.ones(self.normalized_shape))

        if self.bias:
            self.offset = nn.Parameter(torch.zeros(self.normalized_shape))

    def forward(self, x):
        eps = self.eps
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(x.dtype, torch.float32)).eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        if self.p < 0. or self.p > 1.:
            norm_x = x.norm(2, dim=dims, keepdim=True)
            d_x = self.d
        else:
            partial_size = int(self.d * self.p)
            partial_x, _ = torch.split(x, [partial_size, self.d - partial_size], dim=-1)

            norm_x = partial_x.norm(2, dim=-1, keepdim=True)
            d_x = partial_size

        rms_x = norm_x * d_x ** (-1. / 2)
        x_normed = x / (rms_x + eps)

        if self.bias:
            return self.weight * x_normed + self.offset

        return self.weight * x_normed
