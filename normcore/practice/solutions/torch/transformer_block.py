"""A residual block with its LayerNorm in the Pre-Norm, the Post-Norm or the reordered position,
as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). The block is a Transformer block without its attention: one ReLU
feed-forward sub-layer F wrapped in a residual connection and a LayerNorm over the last dim
(torch.nn.LayerNorm semantics: biased variance, eps inside the square root). The parameters
keep the NumPy exercise's names: gamma, beta (the norm's), w1, b1, w2, b2 (F's, laid out for
``h @ w1``). Autograd computes every gradient, the identity path's included.

A name in brackets at the end of a line, such as ``[position]``, names that step for the
catalog of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class TransformerBlock(nn.Module):
    """y = x + F(LN(x)) (``position="pre"``), y = LN(x + F(x)) (``position="post"``) or
    y = x + LN(F(x)) (``position="reordered"``).

        F(h)  = relu(h @ w1 + b1) @ w2 + b2           w1 (C, d_ff), w2 (d_ff, C)
        LN(u) = gamma * (u - mean) / sqrt(var + eps) + beta     over the last dim C, biased
        pre:  the norm on the sub-layer's input, the residual stream x never normalised
        post: the norm on the residual sum (the 2017 Transformer's)
        reordered: the norm on the sub-layer's output, the stream never normalised (OLMo 2's)

    Training and evaluation are the same (no dropout).
    """

    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        if position not in ("pre", "post", "reordered"):
            raise ValueError(f"position must be 'pre', 'post' or 'reordered', got {position!r}")
        self.position = position                                        # [position]
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))                  # [gamma]
        self.beta = nn.Parameter(torch.zeros(d_model))                  # [beta]
        self.w1 = nn.Parameter(torch.randn(d_model, d_ff) / d_model ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.randn(d_ff, d_model) / d_ff ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        if self.position == "pre":
            return x + self.ffn(self.ln(x))                             # (*, C) [y-pre]
        if self.position == "reordered":
            return x + self.ln(self.ffn(x))                             # (*, C) [y-reordered]
        return self.ln(x + self.ffn(x))                                 # (*, C), z = x + F(x)

    def ffn(self, h):
        return torch.relu(h @ self.w1 + self.b1) @ self.w2 + self.b2    # (*, C)

    def ln(self, u):
        mean = u.mean(dim=-1, keepdim=True)                             # (*, 1)
        var = u.var(dim=-1, unbiased=False, keepdim=True)               # (*, 1) biased [var]
        u_hat = (u - mean) / torch.sqrt(var + self.eps)                 # (*, C) [x-hat]
        return self.gamma * u_hat + self.beta                           # (*, C)
