"""Cross-entropy that saves memory by shifting and exponentiating the caller's logits in place."""

import numpy as np


class CrossEntropyLoss:
    def forward(self, logits, targets):
        logits -= logits.max(axis=1, keepdims=True)
        lse = np.log(np.exp(logits).sum(axis=1, keepdims=True))
        logp = logits - lse
        self.p, self.targets = np.exp(logp), targets
        return -logp[np.arange(len(targets)), targets].mean()

    def backward(self, dloss=1.0):
        d = self.p.copy()
        d[np.arange(len(self.targets)), self.targets] -= 1.0
        return dloss * d / len(self.targets)
