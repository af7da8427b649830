"""Cross-entropy with the z-loss, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). The z-loss (PaLM; Wortsman et al. 2023) adds z_loss * log(Z)**2 to
each sample's cross-entropy, Z = sum(exp(logits)) its softmax's normaliser, so that training
keeps log(Z) near 0 and the logits from drifting. Semantics as normcore's
CrossEntropyLoss(z_loss=...): logits (N, C), integer targets (N,), the mean over the N samples
of both terms.

A name in brackets at the end of a line, such as ``[lse]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class ZLossCrossEntropy:
    """loss = mean_n (-logp[n, y_n] + z_loss * lse[n]**2), lse = log(sum(exp(x))) per row.

    Forward (per row n, sums and maxima over the C classes)::

        m    = max(x)                            the shift: exp(x - m) <= 1 cannot overflow
        lse  = m + log(sum(exp(x - m)))          log Z, the max added back
        logp = x - lse                           log-softmax
        loss = (1 / N) sum_n (-logp[n, y_n] + z_loss * lse[n]**2)

    Backward. d lse / d x_j = exp(x_j - lse) = p_j, the softmax, so the z-loss term of a row
    has d (z_loss * lse**2) / d x_j = 2 * z_loss * lse * p_j, and with the cross-entropy's
    (p - onehot)::

        dlogits = dloss * (p - onehot + 2 * z_loss * lse * p) / N

    The z-loss pulls every logit of a row down in proportion to its probability (up when
    lse < 0), and so log Z toward 0. Using the shifted log(sum(exp(x - m))) as lse forgets
    the m: it is log Z only when the max is 0.

    Cache: p, lse, the targets. ``backward(dloss=1.0)`` returns dL/dlogits, in the logits' dtype.
    """

    def __init__(self, z_loss=1e-4):
        self.z_loss = z_loss

    def forward(self, logits, targets):
        x = logits
        n = x.shape[0]
        rows = np.arange(n)                                             # (N,)
        m = x.max(axis=1, keepdims=True)                                # (N, 1)
        lse = m + np.log(np.exp(x - m).sum(axis=1, keepdims=True))      # (N, 1) log Z [lse]
        logp = x - lse                                                  # (N, C) log-softmax
        self.p = np.exp(logp)                                           # (N, C) softmax
        self.lse = lse                                                  # (N, 1) [cache-lse]
        self.targets = np.asarray(targets)                              # (N,)
        ce = -logp[rows, self.targets].mean()                           # ()
        z = self.z_loss * (lse ** 2).mean()                             # () [z]
        return (ce + z).astype(x.dtype)

    def backward(self, dloss=1.0):
        n = self.p.shape[0]
        rows = np.arange(n)
        onehot = np.zeros_like(self.p)                                  # (N, C)
        onehot[rows, self.targets] = 1.0
        dce = (self.p - onehot) / n                                     # (N, C)
        dz = 2.0 * self.z_loss * self.lse * self.p / n                  # (N, C) [dz]
        dlogits = dloss * (dce + dz)                                    # (N, C)
        return dlogits.astype(self.p.dtype)
