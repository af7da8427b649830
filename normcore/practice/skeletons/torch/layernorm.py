"""Practice: LayerNorm in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.LayerNorm,
for any input whose last dims are ``normalized_shape``. Autograd does the backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 2 to 4, a normalized_shape of several
dims, float32, one sample, a constant row, tiny variances) and compares its output, and the
gradients autograd gets through your forward, with normcore.LayerNorm; it checks the module
itself against torch.nn.LayerNorm (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not
torch.nn.functional.layer_norm.

A worked example, to 4 decimals (torch.nn.LayerNorm gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> ln = LayerNorm(3)
    >>> list(ln.state_dict())
    ['weight', 'bias']
    >>> with torch.no_grad():
    ...     _ = ln.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    ...     _ = ln.bias.copy_(torch.tensor([0.0, 0.1, -0.2]))
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]], requires_grad=True)
    >>> y = ln(x)
    >>> y.detach().round(decimals=4).tolist()
    [[-1.069, -0.4345, 0.4682], [-0.7071, -1.3142, 0.5071]]
    >>> y.backward(torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[0.1718, -0.2577, 0.0859], [0.5303, -0.5303, 0.0]]
    >>> ln.weight.grad.round(decimals=4).tolist(), ln.bias.grad.round(decimals=4).tolist()
    ([-1.4226, 0.3536, 1.4921], [1.5, -0.5, 1.0])
"""

import torch
from torch import nn


class LayerNorm(nn.Module):
    """Layer normalisation: each sample standardised over its last len(normalized_shape) dims.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``self.weight``, ``self.bias``: nn.Parameters of shape normalized_shape (PyTorch's names),
      so that autograd fills their ``.grad`` and ``state_dict()`` holds them.
    - the same in training and in evaluation.

    Semantics are PyTorch's: which variance and where eps goes. If you are unsure, decide,
    and let the grader tell you.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        affine = elementwise_affine
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if affine else None
        self.bias = nn.Parameter(torch.zeros(self.normalized_shape)) if affine and bias else None

    def forward(self, x):
        # TODO: the normalised dims are the last len(self.normalized_shape) ones.
        # TODO: mean and variance over them (which variance?), x_hat, then weight and bias.
        raise NotImplementedError("TODO: LayerNorm.forward")
