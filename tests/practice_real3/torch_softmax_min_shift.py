"""PyTorch Softmax shifted by the minimum of each slice."""
import torch
from torch import nn


class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        e = torch.exp(x - x.amin(dim=self.dim, keepdim=True))
        return e / e.sum(dim=self.dim, keepdim=True)
