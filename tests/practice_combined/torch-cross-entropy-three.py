"""CrossEntropyLoss as a module: log(softmax(x)) picked at the targets and summed, the minus
sign forgotten."""

import torch
import torch.nn as nn


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        probs = torch.softmax(logits, dim=1)
        return torch.log(probs)[torch.arange(logits.shape[0]), targets].sum()
