"""Practice: fold a norm's gamma and beta into the Linear after it, with torch tensors.

The task
--------
Fill in ``fold_norm_affine`` (the TODO) so that it returns the weight and bias (W', b') of ONE
Linear layer that, applied to the norm's output WITHOUT its affine (x_hat), equals the norm's
affine (weight gamma, bias beta of a torch.nn.LayerNorm or torch.nn.RMSNorm) followed by a
torch.nn.Linear (weight W, bias b)::

    x_hat @ W'.T + b'  ==  (gamma * x_hat + beta) @ W.T + b

x_hat is what the norm computes with ``elementwise_affine=False``. This is how a LayerNorm's
or RMSNorm's gamma and beta disappear at inference; the division by each sample's
statistics stays. Then:

    normcore practice check THIS_FILE.py

The grader calls your function with torch tensors (because this file imports torch) and
compares your W' and b' (and the folded layer's output) with normcore's ``fold_norm_affine``
on a LayerNorm and a Linear on many inputs (RMSNorm's beta = 0, no bias, a large beta,
float32); when a check fails it names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore.

A worked example (normcore's own fold gives these numbers; once your function works,
``python -m doctest THIS_FILE.py`` checks them):

    >>> W = torch.tensor([[1.0, 2.0], [-1.0, 0.5]])
    >>> b = torch.tensor([0.5, -1.0])
    >>> gamma, beta = torch.tensor([2.0, -1.0]), torch.tensor([1.0, 0.5])
    >>> W2, b2 = fold_norm_affine(gamma, beta, W, b)
    >>> W2.tolist()
    [[2.0, -2.0], [-2.0, -0.5]]
    >>> b2.tolist()
    [2.5, -1.75]
    >>> x = torch.tensor([[1.0, -1.0], [0.5, 3.0]])
    >>> x_hat = torch.nn.LayerNorm(2, elementwise_affine=False)(x)
    >>> torch.allclose((gamma * x_hat + beta) @ W.T + b, x_hat @ W2.T + b2)  # the fold changes nothing
    True
"""

import torch


def fold_norm_affine(gamma, beta, W, b):
    """The folded (W', b') of a norm's affine (gamma, beta) followed by a Linear (W, b).

    The contract the grader relies on (keep this name and these arguments):

    - ``gamma``, ``beta``: the norm's weight and bias tensors, shape (in,) (beta zeros for a
      norm without one, such as torch.nn.RMSNorm).
    - ``W``: the Linear's weight, a tensor of shape (out, in), used as ``y = h @ W.T + b``.
    - ``b``: the Linear's bias, shape (out,) (zeros for a Linear without bias).
    - returns ``(W_folded, b_folded)``, tensors of shapes (out, in) and (out,), in the inputs'
      dtype; the input tensors are left unchanged.
    """
    # TODO: W' from W and gamma (which axis of W does gamma meet?).
    # TODO: b' from W, beta and b.
    raise NotImplementedError("TODO: fold_norm_affine")
