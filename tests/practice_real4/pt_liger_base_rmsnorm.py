"""Liger-Kernel's BaseRMSNorm, the torch reference its RMSNorm kernel is tested against,
ported to the rmsnorm exercise (PyTorch track).

Source: github.com/linkedin/Liger-Kernel, test/transformers/test_rms_norm.py, class
BaseRMSNorm(hidden_size, eps=1e-6): ``variance = hidden_states.pow(2).mean(-1,
keepdim=True)``; ``hidden_states * torch.rsqrt(variance + self.variance_epsilon)``; ``return
self.weight * hidden_states.to(input_dtype)`` -- LlamaRMSNorm without its float32 upcast.
Port: (normalized_shape, eps=None, elementwise_affine) instead of (hidden_size, eps); the
mean over the normalized dims; eps=None as PyTorch's machine epsilon.
"""
import torch
import torch.nn as nn


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
        eps = self.variance_epsilon
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(input_dtype, torch.float32)).eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        variance = hidden_states.pow(2).mean(dims, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + eps)
        return self.weight * hidden_states.to(input_dtype)
