"""``WSLinear``: a Linear whose weight is standardised per output row before use."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import RngLike, real_number
from ..norms.standardization import moments, standardize, standardize_backward
from .linear import _LinearBase


class WSLinear(_LinearBase):
    r"""Weight Standardization (Qiao et al. 2019, arXiv:1903.10520) on a Linear: each output row
    of the weight W (out, in) is standardised over its ``in`` values before the product; W
    itself is the parameter.

    Forward (A = axis 1, the row's ``in`` values)::

        mean, var = mean_A(W), mean_A((W - mean)**2)       (out, 1)   biased
        rstd      = 1 / sqrt(var + eps)                    (out, 1)
        W_hat     = (W - mean) * rstd                      (out, in)
        y         = x @ W_hat.T + b                        (*, out)

    Backward (dW_hat = dL/dW_hat from the Linear's backward)::

        dW = rstd * (dW_hat - mean_A(dW_hat) - W_hat * mean_A(dW_hat * W_hat))   (out, in)

    the standardisation arithmetic of LayerNorm, on the weight's rows, written once in
    ``normcore.norms.standardization`` and called here (``moments``, ``standardize``,
    ``standardize_backward``). Each row of dW sums to zero and is orthogonal to W_hat's row.

    The variance is the biased one and eps sits inside the square root, as in normcore's norms.
    The paper's published code differs and is not consistent with itself: its PyTorch layer
    divides by the unbiased std + 1e-5, its TensorFlow snippet by the biased std + 1e-5
    (README of github.com/joe-siyuan-qiao/WeightStandardization). The paper standardises
    convolution filters (each output channel over in_channels x kH x kW); normcore has no
    convolution layer, so only the Linear form is here. Arguments and state dict are
    ``Linear``'s (weight, bias), plus ``eps``, but it is no ``Linear``: ``fold_batchnorm``,
    which would use W instead of W_hat, refuses it, and the bridge to PyTorch gives it a twin of
    its own (torch has no Weight Standardization). The method is meant for a Linear followed by
    a norm (GroupNorm in the paper). Cache: the Linear's (a copy of x), W_hat and rstd.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, eps: float = 1e-5,
                 init: str = "xavier", gain: float = 1.0, rng: RngLike = None,
                 dtype: DTypeLike = np.float64) -> None:
        self.eps = real_number(eps, "eps", "WSLinear", low=0.0)
        super().__init__(in_features, out_features, bias, init, gain, rng, dtype)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, eps={self.eps}"

    def standardized_weight(self) -> tuple[np.ndarray, np.ndarray]:
        """(W_hat, rstd): the weight standardised per output row, and 1 / sqrt(var + eps)."""
        W = self.weight.data                                       # (out, in)
        mean, var, scale = moments(W, (1,))                        # (out, 1)
        return standardize(W, mean, var, self.eps, scale)          # (out, in), (out, 1)

    def forward(self, x: ArrayLike) -> np.ndarray:
        W_hat, rstd = self.standardized_weight()                   # (out, in), (out, 1)
        y = self.forward_with(x, W_hat)                            # (*, out)  the Linear's, with W_hat
        self._cache = (self._cache, W_hat, rstd)
        return y

    def backward(self, dy: ArrayLike) -> np.ndarray:
        linear_cache, W_hat, rstd = self._cached()
        dx, dW_hat = self.backward_with(dy, W_hat, linear_cache)   # (*, in), (out, in); adds db
        dW = standardize_backward(dW_hat, W_hat, rstd, (1,))       # (out, in)
        self.weight.grad += dW.astype(self.weight.dtype, copy=False)
        return dx
