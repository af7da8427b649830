# Inverted dropout as a module: a Bernoulli keep-mask from torch's generator, scaled by
# 1/(1-p); p=1 handled without a division by zero; identity in eval.
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
            return x * torch.zeros_like(x)
        keep = (torch.rand_like(x) >= self.p).to(x.dtype)
        return x * keep / (1.0 - self.p)
