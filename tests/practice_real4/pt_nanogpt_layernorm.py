"""nanoGPT's LayerNorm "with an optional bias", ported to the layernorm exercise.

Source: github.com/karpathy/nanoGPT, model.py, class LayerNorm(ndim, bias): "LayerNorm but
with an optional bias. PyTorch doesn't support simply bias=False"; ``return
F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)``: eps is hard-coded.
Port: the skeleton's constructor (normalized_shape, eps, elementwise_affine, bias) instead of
(ndim, bias); the weight has the normalized shape. Kept: F.layer_norm (which the exercise
asks not to use), eps fixed at 1e-5 whatever the constructor is given, the weight always
present.
"""
import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    """ LayerNorm but with an optional bias. PyTorch doesn't support simply bias=False """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.weight = nn.Parameter(torch.ones(normalized_shape))
        self.bias = nn.Parameter(torch.zeros(normalized_shape)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)
