"""d2l's dropout from scratch (Dive into Deep Learning, PyTorch edition), ported to the dropout
exercise (PyTorch track).

Source: github.com/d2l-ai/d2l-en (and d2l-zh), chapter_multilayer-perceptrons/dropout.md,
``dropout_layer(X, dropout)``: ``assert 0 <= dropout <= 1``; all zeros for dropout == 1, X
for 0; ``mask = (torch.rand(X.shape) > dropout).float(); return mask * X / (1.0 -
dropout)``; the book's Net applies it only ``if self.training == True``.
Port: wrapped in the skeleton's Dropout(p) module (the training test of the book's Net).
"""
import torch
from torch import nn


def dropout_layer(X, dropout):
    assert 0 <= dropout <= 1
    # In this case, all elements are dropped out
    if dropout == 1:
        return torch.zeros_like(X)
    # In this case, all elements are kept
    if dropout == 0:
        return X
    mask = (torch.rand(X.shape) > dropout).float()
    return mask * X / (1.0 - dropout)


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        # Use dropout only when training the model
        if self.training == True:
            return dropout_layer(x, self.p)
        return x
