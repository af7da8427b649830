"""Hugging Face transformers' LlamaRMSNorm, ported to the rmsnorm exercise (PyTorch track).

Source: github.com/huggingface/transformers, src/transformers/models/llama/modeling_llama.py,
class LlamaRMSNorm (v4.40-v4.50): hidden_states.to(torch.float32), variance =
pow(2).mean(-1, keepdim=True), hidden_states * torch.rsqrt(variance + variance_epsilon),
``self.weight * hidden_states.to(input_dtype)``. Qwen3RMSNorm and MambaRMSNorm are the same
code.
Port: (normalized_shape, eps=None, elementwise_affine) instead of (hidden_size, eps=1e-6);
the mean over the normalized dims; eps=None as PyTorch's machine epsilon (float32's for half
input). Kept: float32 inside for every input dtype, the cast back before the weight.
"""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        """
        LlamaRMSNorm is equivalent to T5LayerNorm
        """
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
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(dims, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + eps)
        return self.weight * hidden_states.to(input_dtype)
