"""Test fixture: a correct cross-entropy with the z-loss written with a logsumexp helper,
np.eye for the onehot and the two gradients fused into p * (1 + 2 z lse) - onehot. The
grader must pass it.
"""

import numpy as np


def logsumexp(x):
    m = x.max(axis=-1, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))


class ZLossCrossEntropy:
    def __init__(self, z_loss=1e-4):
        self.z = z_loss

    def forward(self, logits, targets):
        lse = logsumexp(logits)
        self.probs = np.exp(logits - lse)
        self.lse, self.y = lse, targets
        nll = lse[:, 0] - logits[np.arange(len(targets)), targets]
        return (nll + self.z * lse[:, 0] ** 2).mean().astype(logits.dtype)

    def backward(self, dloss=1.0):
        n, c = self.probs.shape
        onehot = np.eye(c, dtype=self.probs.dtype)[self.y]
        g = self.probs * (1.0 + 2.0 * self.z * self.lse) - onehot
        return (dloss * g / n).astype(self.probs.dtype)
