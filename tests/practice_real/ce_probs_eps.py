import numpy as np


class CrossEntropyLoss:
    def forward(self, logits, targets):
        exps = np.exp(logits - np.max(logits, axis=1, keepdims=True))
        self.probs = exps / np.sum(exps, axis=1, keepdims=True)
        self.targets = targets
        n = logits.shape[0]
        eps = 1e-12  # avoid log(0)
        return -np.mean(np.log(self.probs[np.arange(n), targets] + eps))

    def backward(self, dloss=1.0):
        n = self.probs.shape[0]
        grad = self.probs.copy()
        grad[np.arange(n), self.targets] -= 1
        return dloss * grad / n
