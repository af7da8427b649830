"""A hand-written LayerNorm from a Chinese LLM-basics repository, ported to the layernorm
exercise (PyTorch track).

Source: github.com/fanfanfeng/llm_relative, llm_base/layer_norm/normal_layernorm.py, class
LayerNorm(num_features, eps=1e-6): ``mean = x.mean(dim=-1,keepdim=True)``; ``std =
x.std(dim=-1,keepdim=True,unbiased=False)``; ``normalized_x = (x - mean) / (std +
self.eps)``; ``self.gamma * normalized_x + self.beta`` (its __main__ prints it beside
torch.nn.LayerNorm).
Port: the skeleton's (normalized_shape, eps, elementwise_affine, bias); gamma/beta renamed
weight/bias; the mean and std over the normalized dims (the source's -1 for its one dim).
"""
import torch
import torch.nn as nn


class LayerNorm(nn.Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        self.eps = eps

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dim=dims, keepdim=True)
        std = x.std(dim=dims, keepdim=True, unbiased=False)
        normalized_x = (x - mean) / (std + self.eps)
        return self.weight * normalized_x + self.bias
