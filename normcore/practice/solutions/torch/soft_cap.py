"""Soft-capping as a torch.nn.Module, forward only: a reference answer of the PyTorch track.

Standalone (torch only). y = cap * tanh(x / cap), element by element, as Gemma 2 caps its
attention scores and final logits; torch has no such layer, and autograd writes the backward
(dx = dy * (1 - tanh(x / cap)**2)).

A name in brackets at the end of a line, such as ``[y]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class SoftCap(nn.Module):
    """y = cap * tanh(x / cap); any shape; no parameters."""

    def __init__(self, cap):
        super().__init__()
        self.cap = cap

    def forward(self, x):
        return self.cap * torch.tanh(x / self.cap)  # [y]
