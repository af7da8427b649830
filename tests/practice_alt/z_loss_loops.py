"""Test fixture: a correct cross-entropy with the z-loss written with a Python loop over the
rows, the loss and the gradient of each row accumulated one at a time. The grader must pass
it.
"""

import numpy as np


class ZLossCrossEntropy:
    def __init__(self, z_loss=1e-4):
        self.z_loss = z_loss

    def forward(self, logits, targets):
        n = logits.shape[0]
        self.rows = []
        total = 0.0
        for i in range(n):
            row = logits[i]
            top = row.max()
            log_z = top + np.log(np.exp(row - top).sum())
            total += (log_z - row[targets[i]]) + self.z_loss * log_z * log_z
            self.rows.append((np.exp(row - log_z), log_z, targets[i]))
        return np.asarray(total / n, dtype=logits.dtype)

    def backward(self, dloss=1.0):
        n = len(self.rows)
        grads = []
        for p, log_z, target in self.rows:
            g = p + 2.0 * self.z_loss * log_z * p
            g[target] -= 1.0
            grads.append(dloss * g / n)
        return np.stack(grads).astype(self.rows[0][0].dtype)
