"""The Annotated Transformer's residual sub-layer with its LayerNorm and position-wise
feed-forward, ported to the transformer_block exercise (PyTorch track).

Source: github.com/harvardnlp/annotated-transformer, the_annotated_transformer.py: LayerNorm
(``self.a_2 * (x - mean) / (std + self.eps) + self.b_2`` with ``std = x.std(-1,
keepdim=True)``, eps=1e-6); SublayerConnection: "Note for code simplicity the norm is first
as opposed to last", ``return x + self.dropout(sublayer(self.norm(x)))``; the text gives the
paper's form "LayerNorm(x + Sublayer(x))"; PositionwiseFeedForward: ``self.w_2(
self.dropout(self.w_1(x).relu()))``.
Port: the skeleton's TransformerBlock(d_model, d_ff, position, eps) with its parameters
gamma, beta (the LayerNorm's a_2, b_2), w1, b1, w2, b2 used as h @ w1 + b1; position "pre"
is SublayerConnection, "post" the paper's LayerNorm(x + Sublayer(x)) the text states; the
norm gets the block's eps; dropout removed. Kept: x.std (Bessel's correction) and eps added
to the std.
"""
import torch
import torch.nn as nn


class TransformerBlock(nn.Module):
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        if position not in ("pre", "post"):
            raise ValueError(f"position must be 'pre' or 'post', got {position!r}")
        self.position = position
        self.eps = eps
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))
        self.w1 = nn.Parameter(torch.randn(d_model, d_ff) / d_model ** 0.5)
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.randn(d_ff, d_model) / d_ff ** 0.5)
        self.b2 = nn.Parameter(torch.zeros(d_model))

    def norm(self, x):
        "Construct a layernorm module (See citation for details)."
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.gamma * (x - mean) / (std + self.eps) + self.beta

    def feed_forward(self, x):
        "Implements FFN equation."
        return (x @ self.w1 + self.b1).relu() @ self.w2 + self.b2

    def forward(self, x):
        "Apply residual connection to any sublayer with the same size."
        if self.position == "pre":
            return x + self.feed_forward(self.norm(x))
        return self.norm(x + self.feed_forward(x))
