"""Cross-entropy written quickly: the loss is the mean log-probability of the targets (the
sign forgotten), taken as the log of the softmax, and the gradient (p - onehot) not divided by
the batch size."""

import numpy as np


class CrossEntropyLoss:
    def forward(self, logits, targets):
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        self.p = e / e.sum(axis=1, keepdims=True)
        self.t = np.asarray(targets)
        return np.mean(np.log(self.p[np.arange(len(self.t)), self.t])).astype(logits.dtype)

    def backward(self, dloss=1.0):
        g = self.p.copy()
        g[np.arange(len(self.t)), self.t] -= 1
        return (dloss * g).astype(self.p.dtype)
