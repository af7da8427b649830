"""PyTorch LogSoftmax as x - torch.logsumexp(x, dim, keepdim=True)."""
import torch
from torch import nn


class LogSoftmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return x - torch.logsumexp(x, dim=self.dim, keepdim=True)
