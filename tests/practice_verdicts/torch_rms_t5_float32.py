"""Hugging Face's T5LayerNorm (transformers/models/t5/modeling_t5.py): the variance in
float32, ``hidden_states * torch.rsqrt(variance + eps)`` in the input's dtype, back to the
weight's dtype when that is half precision; the skeleton's normalized_shape and eps=None."""

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = self.variance_epsilon
        if eps is None:
            eps = torch.finfo(torch.promote_types(hidden_states.dtype, torch.float32)).eps
        variance = hidden_states.to(torch.float32).pow(2).mean(dims, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + eps)
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)
        return self.weight * hidden_states
