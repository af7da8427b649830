"""``LayerScale`` and ``ReZero``: a learnt scale on a residual branch, in place of (or beside) a norm."""

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import check_upstream, compute_dtype, float_input, positive_int, real_number
from ..module import Module, Parameter
from ..norms.base import param_dtype


class _Scale(Module):
    """y = s * x with a learnt s broadcast over x's last axis; ds = sum over the rest of dy * x."""

    _scale_name = ""  # the name of the scale Parameter, set by each subclass ("gamma", "alpha")

    @property
    def scale(self) -> Parameter:
        """The learnt scale s."""
        return getattr(self, self._scale_name)

    def _input(self, x: ArrayLike) -> tuple[np.ndarray, np.dtype]:
        x = float_input(x, type(self).__name__)
        self._check_shape(x)
        return x.astype(compute_dtype(x.dtype), copy=False), x.dtype

    def _check_shape(self, x: np.ndarray) -> None:
        """Raise ValueError if x's shape does not fit the layer."""

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._input(x)                               # (*, C)  float16 -> float32
        s = self.scale.data.astype(x.dtype, copy=False)            # (C,) or (1,)
        y = s * x                                                  # (*, C)
        self._cache = (x.copy(), in_dtype)                         # x copied: never the caller's array
        return y.astype(in_dtype, copy=False)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x, in_dtype = self._cached()
        who = type(self).__name__
        dy = check_upstream(dy, x.shape, who).astype(x.dtype, copy=False)  # (*, C)
        s = self.scale.data.astype(x.dtype, copy=False)            # (C,) or (1,)
        lead = tuple(range(x.ndim - 1)) if self.scale.size > 1 else tuple(range(x.ndim))
        ds = (dy * x).sum(axis=lead, dtype=np.float64)             # (C,) or ()
        self.scale.grad += ds.reshape(self.scale.shape).astype(self.scale.dtype, copy=False)
        return (s * dy).astype(in_dtype, copy=False)               # (*, C)


class LayerScale(_Scale):
    r"""LayerScale (Touvron et al. 2021, arXiv:2103.17239, the CaiT paper): a per-channel scale gamma on a residual
    branch's output, x + gamma * F(x), gamma initialised to a small ``init``.

    Forward and backward (C = ``dim``, the last axis of x)::

        y      = gamma * x                   (*, C)   gamma: (C,)
        dx     = gamma * dy                  (*, C)
        dgamma = sum_*(dy * x)               (C,)     over every axis but the last

    The state dict holds ``gamma`` (timm's name for it), as ``layer.gamma``. Training and
    evaluation behave the same. Cache: a copy of x.
    """

    _scale_name = "gamma"

    def __init__(self, dim: int, init: float = 1e-5, dtype: DTypeLike = np.float64) -> None:
        self.dim = positive_int(dim, "dim", "LayerScale")
        self.init = real_number(init, "init", "LayerScale")
        self.gamma = Parameter(np.full(self.dim, self.init), dtype=param_dtype(dtype, "LayerScale"))

    def extra_repr(self) -> str:
        return f"{self.dim}, init={self.init}"

    def _check_shape(self, x: np.ndarray) -> None:
        if x.ndim < 1 or x.shape[-1] != self.dim:
            raise ValueError(f"LayerScale({self.dim}) expects input of shape (*, {self.dim}), got {x.shape}")


class ReZero(_Scale):
    r"""ReZero (Bachlechner et al. 2020, arXiv:2003.04887): one scalar alpha on a residual
    branch, x + alpha * F(x), with alpha initialised to 0, so that every block starts as the
    identity.

    Forward and backward (alpha one scalar shared by every value)::

        y      = alpha * x                   any shape    alpha: (1,)
        dx     = alpha * dy                  = 0 at initialisation: nothing reaches F yet
        dalpha = sum_all(dy * x)             (1,)   the only gradient at alpha = 0

    At alpha = 0 the branch's own parameters get no gradient; alpha's gradient is the branch
    output's correlation with dy, so alpha moves first and lets the gradient into the branch.
    SkipInit (De and Smith 2020) is the same multiplier at the end of each residual
    branch with BatchNorm removed. ``init`` sets alpha's start (0 by default). The state dict
    holds ``alpha`` of shape (1,), as DyT's alpha. Cache: a copy of x.
    """

    _scale_name = "alpha"

    def __init__(self, init: float = 0.0, dtype: DTypeLike = np.float64) -> None:
        self.init = real_number(init, "init", "ReZero")
        self.alpha = Parameter(np.full(1, self.init), dtype=param_dtype(dtype, "ReZero"))

    def extra_repr(self) -> str:
        return f"init={self.init}"
