"""A correct TransformerBlock in another style: the norm and the feed-forward as functions,
torch.var_mean(correction=0) and torch.rsqrt, torch.nn.functional.relu, Post-Norm first, the
parameters registered in another order."""

import torch
import torch.nn.functional as F
from torch import nn


def norm(u, gamma, beta, eps):
    var, mean = torch.var_mean(u, dim=-1, correction=0, keepdim=True)
    return (u - mean) * torch.rsqrt(var + eps) * gamma + beta


def feed_forward(h, w1, b1, w2, b2):
    return F.relu(h @ w1 + b1) @ w2 + b2


class TransformerBlock(nn.Module):
    def __init__(self, d_model, d_ff, position="pre", eps=1e-5):
        super().__init__()
        self.position, self.eps = position, eps
        self.w1 = nn.Parameter(torch.zeros(d_model, d_ff))  # registered in another order
        self.b1 = nn.Parameter(torch.zeros(d_ff))
        self.w2 = nn.Parameter(torch.zeros(d_ff, d_model))
        self.b2 = nn.Parameter(torch.zeros(d_model))
        self.gamma = nn.Parameter(torch.ones(d_model))
        self.beta = nn.Parameter(torch.zeros(d_model))

    def forward(self, x):
        ffn = (self.w1, self.b1, self.w2, self.b2)
        if self.position == "post":
            return norm(x + feed_forward(x, *ffn), self.gamma, self.beta, self.eps)
        if self.position == "reordered":
            return x + norm(feed_forward(x, *ffn), self.gamma, self.beta, self.eps)
        return x + feed_forward(norm(x, self.gamma, self.beta, self.eps), *ffn)
