"""d2l's cross-entropy from scratch, on its own softmax, ported to the cross_entropy exercise
(PyTorch track).

Source: github.com/d2l-ai/d2l-zh, chapter_linear-networks/softmax-regression-scratch.md
(the d2l-en edition has the same functions): ``def softmax(X): X_exp = torch.exp(X);
partition = X_exp.sum(1, keepdim=True); return X_exp / partition``; ``def cross_entropy(y_hat,
y): return - torch.log(y_hat[range(len(y_hat)), y])`` on y_hat = net(X) = softmax(logits);
the training loop averages the per-sample losses (``l.mean().backward()``).
Port: the skeleton's CrossEntropyLoss module: forward(logits, targets) =
cross_entropy(softmax(logits), targets).mean(), the book's two functions unchanged.
"""
import torch
from torch import nn


def softmax(X):
    X_exp = torch.exp(X)
    partition = X_exp.sum(1, keepdim=True)
    return X_exp / partition  # 这里应用了广播机制


def cross_entropy(y_hat, y):
    return - torch.log(y_hat[range(len(y_hat)), y])


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        return cross_entropy(softmax(logits), targets).mean()
