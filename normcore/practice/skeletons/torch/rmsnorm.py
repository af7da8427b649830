"""Practice: RMSNorm in PyTorch, the forward of a torch.nn.Module.

The task
--------
Fill in ``forward`` (the TODO) so that this module behaves exactly like torch.nn.RMSNorm,
for any input whose last dims are ``normalized_shape``, in float16 too. Autograd does the
backward. Then:

    normcore practice check THIS_FILE.py

The grader runs your module on many inputs (ranks 2 to 4, several normalized dims, float32,
float16 with |x| ~ 300, a zero row, the default eps) and compares its output, and the
gradients autograd gets through your forward, with normcore.RMSNorm; it checks the module
itself against torch.nn.RMSNorm (parameters, buffers and state_dict keys; the input left
unchanged) and, when a check fails, names the well-known mistake that produces exactly your
numbers. Write it from tensor operations: no normcore, and not torch.nn.functional.rms_norm.

A worked example, to 4 decimals (torch.nn.RMSNorm gives these numbers; once your
module works, ``python -m doctest THIS_FILE.py`` checks them):

    >>> torch.set_default_dtype(torch.float64)  # the numbers print short
    >>> rms = RMSNorm(3)
    >>> list(rms.state_dict())
    ['weight']
    >>> with torch.no_grad():
    ...     _ = rms.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    >>> x = torch.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]], requires_grad=True)
    >>> y = rms(x)
    >>> y.detach().round(decimals=4).tolist()
    [[0.378, 1.5119, 0.7559], [0.0, 0.0, 0.866]]
    >>> y.backward(torch.tensor([[1.0, 0.0, -1.0], [0.5, -0.5, 2.0]]))  # dL/dy
    >>> x.grad.round(decimals=4).tolist()
    [[0.396, 0.036, -0.117], [0.2887, -0.5774, -0.0]]
    >>> rms.weight.grad.round(decimals=4).tolist()
    [0.378, 0.0, 1.9522]
    >>> half = RMSNorm(3).half()  # float16: x**2 = 90000 does not fit (max 65504)
    >>> half(torch.tensor([[300.0, -200.0, 100.0]], dtype=torch.float16)).tolist()
    [[1.388671875, -0.92578125, 0.462890625]]
"""

import torch
from torch import nn


class RMSNorm(nn.Module):
    """Root-mean-square normalisation over the last len(normalized_shape) dims.

    The contract the grader relies on (keep these names):

    - ``forward(x) -> y``: x of shape (*, *normalized_shape); y has x's shape and dtype.
    - ``self.weight``: an nn.Parameter of shape normalized_shape (PyTorch's name); no bias.
    - ``eps=None`` means the machine epsilon of the dtype it is computed in (float32's for a
      float16 input), as in PyTorch.

    Semantics are PyTorch's; in float16, compute as LLaMA's RMSNorm does. If you are unsure,
    decide, and let the grader tell you.
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) if elementwise_affine else None

    def forward(self, x):
        # TODO: the mean of x**2 over the last len(self.normalized_shape) dims (and in float16?),
        #       then x / sqrt(ms + eps), then weight.
        raise NotImplementedError("TODO: RMSNorm.forward")
