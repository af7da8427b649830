"""Cross-entropy with a light label smoothing of 0.01 (as modern training recipes do)."""
import numpy as np


class CrossEntropyLoss:
    smoothing = 0.01

    def forward(self, logits, targets):
        n, c = logits.shape
        z = logits - logits.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        q = np.full(logits.shape, self.smoothing / c, dtype=logits.dtype)
        q[np.arange(n), targets] += 1.0 - self.smoothing
        self.p, self.q = np.exp(logp), q
        return -(q * logp).sum() / n

    def backward(self, dloss=1.0):
        n = self.p.shape[0]
        return ((self.p - self.q) * (dloss / n)).astype(self.p.dtype)
