"""PyTorch cross-entropy as the log of F.softmax, gathered at the targets."""
import torch
import torch.nn.functional as F
from torch import nn


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        p = F.softmax(logits, dim=1)
        return -torch.log(p.gather(1, targets.view(-1, 1))).mean()
