"""A PyTorch cross-entropy: softmax, then log(p + 1e-5), then the negative log-likelihood."""

import torch
from torch import nn


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        p = torch.softmax(logits, dim=1)
        logp = torch.log(p + 1e-5)
        return nn.functional.nll_loss(logp, targets)
