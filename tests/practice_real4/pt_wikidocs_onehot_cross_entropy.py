"""The one-hot cross-entropy of the Korean PyTorch tutorial's softmax regression, as written in
a course repository, ported to the cross_entropy exercise (PyTorch track).

Source: github.com/EEDK/2021-inu-Ai, main.py, which follows the wikidocs tutorial
"PyTorch로 시작하는 딥 러닝 입문" (softmax regression cost, wikidocs.net/60572):
``hypothesis = F.softmax(z, dim=1)``; ``y_one_hot = torch.zeros_like(hypothesis);
y_one_hot.scatter_(1, y.unsqueeze(1), 1)``; ``cost = (y_one_hot *
-torch.log(hypothesis)).sum(dim=1).mean()`` (the tutorial then shows F.log_softmax as the
better form).
Port: the skeleton's CrossEntropyLoss module with forward(logits, targets) computing that
cost.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        hypothesis = F.softmax(logits, dim=1)
        y_one_hot = torch.zeros_like(hypothesis)
        y_one_hot.scatter_(1, targets.unsqueeze(1), 1)
        cost = (y_one_hot * -torch.log(hypothesis)).sum(dim=1).mean()
        return cost
