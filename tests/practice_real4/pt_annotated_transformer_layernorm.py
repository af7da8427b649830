"""The Annotated Transformer's LayerNorm, ported to the layernorm exercise (PyTorch track).

Source: github.com/harvardnlp/annotated-transformer, the_annotated_transformer.py (2022
edition; the 2018 blog post nlp.seas.harvard.edu/2018/04/03/attention.html has the same
class): "Construct a layernorm module"; ``mean = x.mean(-1, keepdim=True); std = x.std(-1,
keepdim=True); return self.a_2 * (x - mean) / (std + self.eps) + self.b_2`` with eps=1e-6.
x.std uses torch's default Bessel correction (n - 1), and eps is added to the std.
Port: (normalized_shape, eps, elementwise_affine, bias) instead of (features, eps); a_2 and
b_2 renamed weight and bias (the skeleton's names); mean and std over the normalized dims.
"""
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    "Construct a layernorm module (See citation for details)."

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super(LayerNorm, self).__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        self.eps = eps

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dims, keepdim=True)
        std = x.std(dims, keepdim=True)
        return self.weight * (x - mean) / (std + self.eps) + self.bias
