"""Hugging Face transformers' T5LayerNorm, ported to the rmsnorm exercise (PyTorch track).

Source: github.com/huggingface/transformers, src/transformers/models/t5/modeling_t5.py,
class T5LayerNorm: "T5 uses a layer_norm which only scales and doesn't shift ... w/o mean
and there is no bias"; the variance is computed in float32
(``hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)``), the input itself is NOT
upcast, and the result is cast to the weight's dtype when that is half precision.
Port: (normalized_shape, eps=None, elementwise_affine) instead of (hidden_size, eps=1e-6);
the mean over the normalized dims; eps=None as PyTorch's machine epsilon.
"""
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        """
        Construct a layernorm module in the T5 style. No bias and no subtraction of mean.
        """
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        # T5 uses a layer_norm which only scales and doesn't shift, which is also known as Root
        # Mean Square Layer Normalization; the variance is calculated w/o mean and in fp32
        eps = self.variance_epsilon
        if eps is None:  # port: the skeleton's eps=None
            eps = torch.finfo(torch.promote_types(hidden_states.dtype, torch.float32)).eps
        dims = tuple(range(-len(self.normalized_shape), 0))
        variance = hidden_states.to(torch.float32).pow(2).mean(dims, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + eps)

        # convert into half-precision if necessary
        if self.weight.dtype in [torch.float16, torch.bfloat16]:
            hidden_states = hidden_states.to(self.weight.dtype)

        return self.weight * hidden_states
