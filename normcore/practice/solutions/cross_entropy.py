"""Cross-entropy on logits, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.CrossEntropyLoss() with its defaults: logits
(N, C) with the classes on axis 1, integer targets (N,), the mean over the N samples.

A name in brackets at the end of a line, such as ``[logp]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class CrossEntropyLoss:
    """loss = mean_n -log softmax(logits[n])[targets[n]], fused with the log-softmax.

    Forward (per row n, sums and maxima over the C classes)::

        z    = x - max(x)                        shift invariant; exp(z) <= 1 cannot overflow
        logp = z - log(sum(exp(z)))              log-softmax, never log(0): a confident wrong
                                                 prediction has logp = -800, not log(0) = -inf
        loss = -(1 / N) sum_n logp[n, y_n]

    Backward. d logp_c / d x_j = [c == j] - p_j with p = softmax(x) = exp(logp), so

        d loss / d x[n, j] = -(1 / N) ([y_n == j] - p[n, j]) = (p[n, j] - onehot[n, j]) / N
        dlogits = dloss * (p - onehot) / N

    The fused form never divides by p. Going through softmax first (dL/dp = -1/p at the target,
    then the softmax Jacobian) gives the same number in exact arithmetic, but 1/p overflows
    when the target's probability underflows to 0, and inf * 0 is nan.

    Cache: p, the targets. ``backward(dloss=1.0)`` returns dL/dlogits, in the logits' dtype.
    """

    def forward(self, logits, targets):
        x = logits
        n = x.shape[0]
        rows = np.arange(n)                                             # (N,)
        z = x - x.max(axis=1, keepdims=True)                            # (N, C), max 0 [shift]
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))         # (N, C) log-softmax [logp]
        self.p = np.exp(logp)                                           # (N, C) softmax
        self.targets = np.asarray(targets)                              # (N,)
        loss = -logp[rows, self.targets].mean()                         # () [loss]
        return loss.astype(x.dtype)

    def backward(self, dloss=1.0):
        n = self.p.shape[0]
        rows = np.arange(n)
        onehot = np.zeros_like(self.p)                                  # (N, C)
        onehot[rows, self.targets] = 1.0
        dlogits = dloss * (self.p - onehot) / n                         # (N, C) [dlogits]
        return dlogits.astype(self.p.dtype)
