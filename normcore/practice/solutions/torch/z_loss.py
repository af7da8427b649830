"""Cross-entropy with the z-loss as a torch.nn.Module, forward only: a reference answer of the
PyTorch track.

Standalone (torch only). Semantics as normcore's CrossEntropyLoss(z_loss=...): logits (N, C),
integer targets (N,), the mean over the N samples of -log softmax(logits)[n, target_n] +
z_loss * lse[n]**2, lse = log(sum(exp(logits))) computed with the max shift and the max added
back.

A name in brackets at the end of a line, such as ``[lse]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import torch
from torch import nn


class ZLossCrossEntropy(nn.Module):
    """loss = mean_n (lse[n] - logits[n, y_n] + z_loss * lse[n]**2), lse = log Z per row."""

    def __init__(self, z_loss=1e-4):
        super().__init__()
        self.z_loss = z_loss

    def forward(self, logits, targets):
        m = logits.amax(dim=1, keepdim=True)                                 # (N, 1)
        lse = m + torch.exp(logits - m).sum(dim=1, keepdim=True).log()       # (N, 1) [lse]
        logp = logits - lse                                                  # (N, C)
        ce = -logp[torch.arange(len(targets)), targets].mean()               # ()
        return ce + self.z_loss * lse.pow(2).mean()                          # () [z]
