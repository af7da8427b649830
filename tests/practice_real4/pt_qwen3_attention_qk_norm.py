"""Hugging Face transformers' Qwen3Attention (per-head q_norm/k_norm) with its eager attention,
ported to the qk_norm exercise (PyTorch track).

Source: github.com/huggingface/transformers, src/transformers/models/qwen3/modeling_qwen3.py:
Qwen3RMSNorm (float32 inside: ``hidden_states.to(torch.float32)``, ``pow(2).mean(-1)``,
``torch.rsqrt(variance + eps)``, ``self.weight * hidden_states.to(input_dtype)``);
Qwen3Attention.forward: ``hidden_shape = (*input_shape, -1, self.head_dim)``,
``self.q_norm(self.q_proj(hidden_states).view(hidden_shape)).transpose(1, 2)`` (the same for
k), v without norm; eager_attention_forward: ``torch.matmul(query, key.transpose(2, 3)) *
scaling`` (scaling = head_dim ** -0.5), an additive causal mask (the dtype's min above the
diagonal), ``nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(
query.dtype)``, ``attn_output.transpose(1, 2)``, ``reshape(*input_shape, -1)``, o_proj.
Port: the skeleton's (d_model, n_heads, causal) and weights wq, wk, wv, wo (x @ w, no
biases); q_norm.weight/k_norm.weight renamed gamma_q/gamma_k; eps the exercise's (the input
dtype's machine epsilon) instead of config.rms_norm_eps; no rotary embedding, no KV groups
(num_key_value_heads = num_heads), no dropout. Kept: float32 inside both norms and the
softmax, the additive finfo.min mask.
"""
import torch
from torch import nn


class Qwen3RMSNorm(nn.Module):
    def __init__(self, weight, eps=1e-6):
        """
        Qwen3RMSNorm is equivalent to T5LayerNorm (the weight is the module's gamma_q or gamma_k)
        """
        super().__init__()
        self.weight = weight
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def eager_attention_forward(query, key, value, attention_mask, scaling):
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, : key.shape[-2]]
        attn_weights = attn_weights + causal_mask

    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


class QKNormSelfAttention(nn.Module):
    """Multi-headed attention from 'Attention Is All You Need' paper"""

    def __init__(self, d_model, n_heads, causal=False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.d_model, self.n_heads, self.causal = d_model, n_heads, causal
        self.head_dim = d_model // n_heads
        self.scaling = self.head_dim ** -0.5
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.gamma_q = nn.Parameter(torch.ones(self.head_dim))  # unlike olmo, only on the head dim!
        self.gamma_k = nn.Parameter(torch.ones(self.head_dim))  # thus post q_norm does not need reshape

    def forward(self, hidden_states):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        eps = torch.finfo(hidden_states.dtype).eps
        q_norm, k_norm = Qwen3RMSNorm(self.gamma_q, eps), Qwen3RMSNorm(self.gamma_k, eps)

        query_states = q_norm((hidden_states @ self.wq).view(hidden_shape)).transpose(1, 2)
        key_states = k_norm((hidden_states @ self.wk).view(hidden_shape)).transpose(1, 2)
        value_states = (hidden_states @ self.wv).view(hidden_shape).transpose(1, 2)

        attention_mask = None
        if self.causal:
            T = hidden_states.shape[-2]
            min_dtype = torch.finfo(hidden_states.dtype).min
            attention_mask = torch.full((T, T), min_dtype, dtype=hidden_states.dtype).triu(1)[None, None]

        attn_output, attn_weights = eager_attention_forward(
            query_states, key_states, value_states, attention_mask, scaling=self.scaling)

        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        attn_output = attn_output @ self.wo
        return attn_output
