"""A correct SoftCap in another style: torch.div, torch.tanh and torch.mul on the cap kept
as a tensor."""

import torch
from torch import nn


class SoftCap(nn.Module):
    def __init__(self, cap):
        super().__init__()
        self.cap = float(cap)

    def forward(self, x):
        return torch.mul(torch.tanh(torch.div(x, self.cap)), self.cap)
