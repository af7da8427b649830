"""Practice: fold a norm's gamma and beta into the Linear after it, by hand in NumPy.

The task
--------
Fill in ``fold_norm_affine`` (the TODO) so that it returns the weight and bias (W', b') of ONE
Linear layer that, applied to the norm's output WITHOUT its affine (x_hat), equals the norm's
affine (gamma, beta) followed by a Linear (weight W, bias b)::

    x_hat @ W'.T + b'  ==  (gamma * x_hat + beta) @ W.T + b

x_hat is what LayerNorm computes before its affine: x minus its mean, divided by
sqrt(var + eps) (RMSNorm: x / sqrt(mean(x**2) + eps)). This is how a LayerNorm's or RMSNorm's gamma and beta disappear
at inference; the division by each sample's statistics stays. Then:

    normcore practice check THIS_FILE.py

The grader compares your W' and b' (and the folded layer's output) with normcore's
``fold_norm_affine`` on a LayerNorm and a Linear on many inputs (RMSNorm's beta = 0, no bias,
a large beta, float32) and, when a check fails, names the well-known mistake that produces
exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example (normcore's own fold gives these numbers; once your function works,
``python -m doctest THIS_FILE.py`` checks them):

    >>> W = np.array([[1.0, 2.0], [-1.0, 0.5]])
    >>> b = np.array([0.5, -1.0])
    >>> W2, b2 = fold_norm_affine(gamma=np.array([2.0, -1.0]), beta=np.array([1.0, 0.5]),
    ...                           W=W, b=b)
    >>> W2.tolist()
    [[2.0, -2.0], [-2.0, -0.5]]
    >>> b2.tolist()
    [2.5, -1.75]
"""

import numpy as np


def fold_norm_affine(gamma, beta, W, b):
    """The folded (W', b') of a norm's affine (gamma, beta) followed by a Linear (W, b).

    The contract the grader relies on (keep this name and these arguments):

    - ``gamma``, ``beta``: the norm's scale and shift, shape (in,) (beta zeros for a norm
      without one, such as RMSNorm).
    - ``W``: the Linear's weight, shape (out, in), used as ``y = h @ W.T + b``.
    - ``b``: the Linear's bias, shape (out,) (zeros for a Linear without bias).
    - returns ``(W_folded, b_folded)``, shapes (out, in) and (out,), in the inputs' dtype; the
      input arrays are left unchanged.
    """
    # TODO: W' from W and gamma (which axis of W does gamma meet?).
    # TODO: b' from W, beta and b.
    raise NotImplementedError("TODO: fold_norm_affine")
