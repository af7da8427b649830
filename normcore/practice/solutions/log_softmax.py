"""Log-softmax along an axis, forward and backward, by hand in NumPy: a reference answer.

Standalone (numpy only). Semantics as torch.nn.LogSoftmax(dim): every slice along ``axis``
becomes the logarithm of a probability distribution (its exponentials sum to 1).

A name in brackets at the end of a line, such as ``[axis]``, names that step for the catalog
of mistakes the grader recognises (``normcore practice list --mistakes``).
"""

import numpy as np


class LogSoftmax:
    """logp = log(softmax(x)) along ``axis`` (default the last), without forming softmax first.

    Forward (sums and maxima along the axis, keepdims)::

        z    = x - max(x)                   shift invariant; the largest z is 0, so the sum
        logp = z - log(sum(exp(z)))         is in [1, n] and its log is finite

    Never log(softmax(x)): a logit 800 below the others has softmax exp(-800) = 0 in float64
    (exp underflows below about -745), and log(0) = -inf where the right answer is about -800.
    z - log(sum(exp(z))) only takes the log of the sum, which is at least 1.

    Backward. With p = softmax(x) = exp(logp), d logp_i / d x_j = [i == j] - p_j: every
    log-probability depends on every logit of its slice (through the log of the sum), so the
    Jacobian is I - 1 p^T, not its diagonal 1 - p_i. Applied to dy::

        dx_j = sum_i dy_i ([i == j] - p_j) = dy_j - p_j sum_i dy_i
        dx   = dy - p * sum(dy)

    (Keeping only the diagonal gives dy - p * dy; softmax's formula y * (dy - sum(dy * y))
    is the backward of softmax, and applied to logp it is the backward of nothing.) The right
    dx sums to sum(dy) - sum(p) sum(dy) = 0 along the axis.

    Cache: logp.
    """

    def __init__(self, axis=-1):
        self.axis = axis  # [axis]

    def forward(self, x):
        a = self.axis                                                   # the axis
        z = x - x.max(axis=a, keepdims=True)                            # (..., C, ...), max 0 [shift]
        self.logp = z - np.log(np.exp(z).sum(axis=a, keepdims=True))    # (..., C, ...) [logp]
        return self.logp.astype(x.dtype)

    def backward(self, dy):
        a = self.axis
        p = np.exp(self.logp)                                           # (..., C, ...) softmax
        dx = dy - p * dy.sum(axis=a, keepdims=True)                     # (..., C, ...) [dx]
        return dx.astype(dy.dtype)
