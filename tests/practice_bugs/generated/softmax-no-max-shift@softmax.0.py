"""softmax without subtracting the max.

Generated, do not edit: regenerate with `python tests/practice_bugs/generate.py`.
Mistake softmax-no-max-shift, variant 0: normcore/practice/solutions/softmax.py with exactly
that variant of normcore/practice/catalog.py applied. The grader must name the mistake on
every failing check.
"""

import numpy as np


class Softmax:
    """y = softmax(x) along ``axis`` (default the last); any shape, no parameters.

    Forward (sums and maxima along the axis, keepdims)::

        z = x - max(x)                  softmax is shift invariant, and now exp(z) <= 1:
        y = exp(z) / sum(exp(z))        no overflow, however large the logits

    Backward. The Jacobian of one slice is dy_i/dx_j = y_i ([i == j] - y_j), a full matrix
    (diag(y) - y y^T), not only its diagonal y_i (1 - y_i). Applied to dy without forming it::

        dx_j = sum_i dy_i y_i ([i == j] - y_j) = y_j (dy_j - sum_i dy_i y_i)
        dx   = y * (dy - sum(dy * y))

    Cache: y.
    """

    def __init__(self, axis=-1):
        self.axis = axis  # [axis]

    def forward(self, x):
        a = self.axis                                                   # the softmax axis
        z = x                            # (..., C, ...), max 0 [shift]
        e = np.exp(z)
        self.y = e / e.sum(axis=a, keepdims=True)                       # (..., C, ...)
        return self.y.astype(x.dtype)

    def backward(self, dy):
        a = self.axis
        y = self.y
        dx = y * (dy - (dy * y).sum(axis=a, keepdims=True))             # (..., C, ...) [dx]
        return dx.astype(dy.dtype)
