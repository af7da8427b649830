"""PyTorch Dropout with torch.bernoulli for the keep mask; p = 1 gives zeros."""
import torch
from torch import nn


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0:
            return x
        if self.p == 1:
            return x * 0.0
        keep = torch.bernoulli(torch.full_like(x, 1 - self.p))
        return x * keep / (1 - self.p)
