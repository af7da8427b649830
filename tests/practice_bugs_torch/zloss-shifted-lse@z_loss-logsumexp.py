"""ZLossCrossEntropy that squares torch.logsumexp of the shifted logits, the max not added back."""

import torch
from torch import nn


class ZLossCrossEntropy(nn.Module):
    def __init__(self, z_loss=1e-4):
        super().__init__()
        self.z_loss = z_loss

    def forward(self, logits, targets):
        shifted = logits - logits.max(dim=1, keepdim=True).values
        lse = torch.logsumexp(shifted, dim=1)
        picked = shifted.gather(1, targets.view(-1, 1)).squeeze(1)
        return (lse - picked + self.z_loss * lse ** 2).mean()
