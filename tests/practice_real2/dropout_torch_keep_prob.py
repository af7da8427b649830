# Dropout module, the "keep_prob" convention of older TensorFlow code: a unit survives
# with probability p and survivors are scaled by 1/p.
import torch
from torch import nn


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training:
            return x
        keep_prob = self.p
        if keep_prob == 0:
            return torch.zeros_like(x) * x
        mask = torch.bernoulli(torch.full_like(x, keep_prob))
        return x * mask / keep_prob
