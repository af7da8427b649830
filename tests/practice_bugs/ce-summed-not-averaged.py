"""Cross-entropy with reduction 'sum' where the default is 'mean'."""

import numpy as np


class CrossEntropyLoss:
    def forward(self, logits, targets):
        m = logits.max(axis=1, keepdims=True)
        lse = m + np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        logprobs = logits - lse
        self.probs = np.exp(logprobs)
        self.y = targets
        picked = np.take_along_axis(logprobs, targets[:, None], axis=1)
        return -picked.sum()

    def backward(self, dloss=1.0):
        g = self.probs.copy()
        g[np.arange(len(self.y)), self.y] -= 1.0
        return g * dloss
