# CrossEntropyLoss as a module: logsumexp by hand (max shifted out), gather the target
# column, mean over the batch.
import torch
from torch import nn


class CrossEntropyLoss(nn.Module):
    def forward(self, logits, targets):
        m = logits.max(dim=1, keepdim=True).values.detach()
        lse = m + torch.log(torch.exp(logits - m).sum(dim=1, keepdim=True))
        logp = logits - lse
        return -logp.gather(1, targets.long().unsqueeze(1)).squeeze(1).mean()
