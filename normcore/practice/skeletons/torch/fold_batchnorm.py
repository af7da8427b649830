"""Practice: fold a BatchNorm (in evaluation mode) into the Linear before it, with torch tensors.

The task
--------
Fill in ``fold_batchnorm`` (the TODO) so that it returns the weight and bias (W', b') of ONE
Linear layer equal to a torch.nn.Linear (weight W, bias b) followed by a torch.nn.BatchNorm1d
in evaluation mode (running_mean, running_var, weight gamma, bias beta, eps)::

    x @ W'.T + b'  ==  gamma * (x @ W.T + b - running_mean) / sqrt(running_var + eps) + beta

This is how a trained network's BatchNorms disappear at inference. Then:

    normcore practice check THIS_FILE.py

The grader calls your function with torch tensors (because this file imports torch) and
compares your W' and b' (and the folded layer's output) with normcore's ``fold_batchnorm``
on a Linear and a BatchNorm1d in evaluation on many inputs (a running variance near eps, a
large eps, a large running mean, no bias, float32); when a check fails it names the
well-known mistake that produces exactly your numbers. Write it from tensor operations: no
normcore, and not torch.nn.utils.fusion (fuse_linear_bn_weights).

A worked example (normcore's own fold gives these numbers; once your function works,
``python -m doctest THIS_FILE.py`` checks them):

    >>> W = torch.tensor([[1.0, 2.0], [-1.0, 0.5]])
    >>> b = torch.tensor([0.5, -1.0])
    >>> W2, b2 = fold_batchnorm(W, b, running_mean=torch.tensor([1.0, -2.0]),
    ...                         running_var=torch.tensor([4.0, 0.25]),
    ...                         gamma=torch.tensor([2.0, 1.0]), beta=torch.tensor([0.0, 0.5]),
    ...                         eps=0.0)
    >>> W2.tolist()
    [[1.0, 2.0], [-2.0, 1.0]]
    >>> b2.tolist()
    [-0.5, 2.5]
    >>> x = torch.tensor([[1.0, -1.0]])
    >>> bn = torch.nn.BatchNorm1d(2, eps=0.0).eval()
    >>> _ = bn.load_state_dict({"weight": torch.tensor([2.0, 1.0]), "bias": torch.tensor([0.0, 0.5]),
    ...                         "running_mean": torch.tensor([1.0, -2.0]),
    ...                         "running_var": torch.tensor([4.0, 0.25]),
    ...                         "num_batches_tracked": torch.tensor(0)})
    >>> bn(x @ W.T + b).tolist(), (x @ W2.T + b2).tolist()  # the fold changes nothing
    ([[-1.5, -0.5]], [[-1.5, -0.5]])
"""

import torch


def fold_batchnorm(W, b, running_mean, running_var, gamma, beta, eps=1e-5):
    """The folded (W', b') of a Linear followed by a BatchNorm1d in evaluation mode.

    The contract the grader relies on (keep this name and these arguments):

    - ``W``: the Linear's weight, a tensor of shape (out, in), used as ``z = x @ W.T + b``.
    - ``b``: the Linear's bias, shape (out,) (zeros for a Linear without bias).
    - ``running_mean``, ``running_var``, ``gamma``, ``beta``: the BatchNorm1d's tensors,
      shape (out,); ``eps``: its eps, a float.
    - returns ``(W_folded, b_folded)``, tensors of shapes (out, in) and (out,), in the inputs'
      dtype; the input tensors are left unchanged.
    """
    # TODO: the per-feature scale s from gamma, running_var and eps.
    # TODO: W' and b' from W, b, s, running_mean and beta.
    raise NotImplementedError("TODO: fold_batchnorm")
