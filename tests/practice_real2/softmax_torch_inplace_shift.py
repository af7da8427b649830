# Softmax module; the max is subtracted in place to avoid an extra (B, T, V) buffer.
from torch import nn


class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        x.sub_(x.amax(dim=self.dim, keepdim=True).detach())
        e = x.exp()
        return e / e.sum(dim=self.dim, keepdim=True)
