"""Hugging Face's Qwen3RMSNorm (transformers/models/qwen3/modeling_qwen3.py): the input
cast to float32, normalised, cast back to the input's dtype, then the weight; the
skeleton's normalized_shape and eps=None."""

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
        input_dtype = hidden_states.dtype
        dims = tuple(range(-len(self.normalized_shape), 0))
        eps = self.variance_epsilon
        if eps is None:
            eps = torch.finfo(torch.promote_types(input_dtype, torch.float32)).eps
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(dims, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + eps)
        return self.weight * hidden_states.to(input_dtype)
