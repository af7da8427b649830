"""A correct CrossEntropyLoss in another style: logsumexp and gather."""

import torch
from torch import nn


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        picked = logits.gather(1, targets.view(-1, 1)).squeeze(1)
        return (torch.logsumexp(logits, dim=1) - picked).mean()
