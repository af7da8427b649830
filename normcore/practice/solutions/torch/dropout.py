"""Dropout as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). Semantics as torch.nn.Dropout: inverted dropout. In training each
unit is zeroed with probability p and the kept ones are scaled by 1 / (1 - p); in evaluation
the layer returns its input. The mask is drawn from torch's generator (torch.manual_seed).

A name in brackets at the end of a line, such as ``[keep]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class Dropout(nn.Module):
    """y = x * mask / (1 - p) in training (mask ~ Bernoulli(1 - p)), y = x in evaluation."""

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:  # [eval]
            return x  # [eval-return]
        keep = torch.rand_like(x) >= self.p                             # kept with probability 1 - p [keep]
        scale = 0.0 if self.p == 1.0 else 1.0 / (1.0 - self.p)          # [scale]
        return x * keep * scale  # [mask]
