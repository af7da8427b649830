"""Practice: fold a BatchNorm (in evaluation mode) into the Linear before it, by hand in NumPy.

The task
--------
Fill in ``fold_batchnorm`` (the TODO) so that it returns the weight and bias (W', b') of ONE
Linear layer equal to a Linear (weight W, bias b) followed by a BatchNorm1d in evaluation
mode (running_mean, running_var, gamma, beta, eps)::

    x @ W'.T + b'  ==  gamma * (x @ W.T + b - running_mean) / sqrt(running_var + eps) + beta

This is how a trained network's BatchNorms disappear at inference. Then:

    normcore practice check THIS_FILE.py

The grader compares your W' and b' (and the folded layer's output) with normcore's
``fold_batchnorm`` on a Linear and a BatchNorm1d in evaluation on many inputs (a running
variance near eps, a large eps, a large running mean, no bias, float32) and, when a check
fails, names the well-known mistake that produces exactly your numbers.
NumPy only: do not import normcore or torch here.

A worked example, to 4 decimals (normcore's own fold gives these numbers; once your function
works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> W = np.array([[1.0, 2.0], [-1.0, 0.5]])
    >>> b = np.array([0.5, -1.0])
    >>> W2, b2 = fold_batchnorm(W, b, running_mean=np.array([1.0, -2.0]),
    ...                         running_var=np.array([4.0, 0.25]), gamma=np.array([2.0, 1.0]),
    ...                         beta=np.array([0.0, 0.5]), eps=0.0)
    >>> W2.tolist()
    [[1.0, 2.0], [-2.0, 1.0]]
    >>> b2.tolist()
    [-0.5, 2.5]
"""

import numpy as np


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    """The folded (W', b') of a Linear followed by a BatchNorm1d in evaluation mode.

    The contract the grader relies on (keep this name and these arguments):

    - ``W``: the Linear's weight, shape (out, in), used as ``z = x @ W.T + b``.
    - ``b``: the Linear's bias, shape (out,) (zeros for a Linear without bias).
    - ``running_mean``, ``running_var``, ``gamma``, ``beta``: the BatchNorm1d's, shape (out,).
    - ``eps``: the BatchNorm1d's eps.
    - returns ``(W_folded, b_folded)``, shapes (out, in) and (out,), in the inputs' dtype; the
      input arrays are left unchanged.
    """
    # TODO: the per-feature scale s from gamma, running_var and eps.
    # TODO: W' and b' from W, b, s, running_mean and beta.
    raise NotImplementedError("TODO: fold_batchnorm")
