"""``WeightNorm``: a Linear whose weight is a direction times a length, w = g * v / ||v||."""

from collections.abc import Mapping
from typing import Any, Self

import numpy as np
from numpy.typing import ArrayLike

from .._array import integer
from ..module import Parameter
from .linear import Linear, _LinearBase

# the keys of torch.nn.utils.parametrizations.weight_norm's state dict, and normcore's names for them
TORCH_PARAMETRIZATION_KEYS = {"parametrizations.weight.original0": "weight_g",
                              "parametrizations.weight.original1": "weight_v"}


class WeightNorm(_LinearBase):
    r"""Weight normalization (Salimans and Kingma 2016, arXiv:1602.07868) of a ``Linear``: its
    weight w (out, in) is learnt as a length g and a direction v.

    Forward (A = every axis of v but ``dim``; the norm of each slice along ``dim``)::

        norm = sqrt(sum_A(v**2))                 g's shape: (out, 1) for dim=0, (1, in) for dim=1, () for None
        w    = g * v / norm                      (out, in)
        y    = x @ w.T + b                       (*, out)   the Linear's forward

    Backward (dw = dL/dw from the Linear's backward; v_hat = v / norm)::

        dg = sum_A(dw * v_hat)                   = (dw . v) / ||v||, per slice
        dv = (g / norm) * (dw - dg * v_hat)      = (g / ||v||) (I - v_hat v_hat^T) dw

    dv is dw projected onto the plane orthogonal to v (the part of dw along v moves only g),
    so sum_A(dv * v) = 0: the direction's gradient is orthogonal to the direction.

    ``dim`` as in PyTorch's ``weight_norm``: 0 (default: one g per output row), 1 (one per input
    column), None (one g for the whole weight); -2 is 0, and -1, as in PyTorch, means None (not
    axis 1). The state dict is that of ``torch.nn.utils.weight_norm``: bias, weight_g, weight_v;
    ``load_state_dict`` also takes the keys of ``torch.nn.utils.parametrizations.weight_norm``
    (``parametrizations.weight.original0`` for g, ``original1`` for v). ``state_dict()``
    always writes weight_g and weight_v. At construction g = ||w|| and v = w, so the layer
    starts with the Linear's weight; the Linear passed in is copied, never changed. The layer
    has no ``weight`` parameter (``compute_weight()`` gives w) and is no ``Linear``:
    ``fold_batchnorm`` refuses it; the bridge to PyTorch makes it torch's Linear under
    ``torch.nn.utils.parametrizations.weight_norm`` (and back, with ``from_torch``).
    Cache: the Linear's (a copy of x), w, v_hat and g / norm.
    """

    def __init__(self, module: Linear, dim: int | None = 0) -> None:
        if not isinstance(module, Linear):
            raise TypeError(f"WeightNorm wraps a normcore Linear, got {type(module).__name__}")
        if dim is not None:
            dim = integer(dim, "dim", "WeightNorm")
            if not -2 <= dim <= 1:
                raise ValueError(f"WeightNorm: dim must be None, 0, 1, -2 or -1 for a Linear's 2-d weight, "
                                 f"got {dim}")
            dim = None if dim == -1 else dim % 2                  # PyTorch: -1 is "no dim"
        self.dim = dim
        self.in_features, self.out_features = module.in_features, module.out_features
        self.init, self.gain = module.init, module.gain
        w = module.weight.data                                    # (out, in)
        self.bias = None if module.bias is None else Parameter(module.bias.data.copy(), dtype=module.bias.dtype)
        g_shape = () if dim is None else w.shape[:1] + (1,) if dim == 0 else (1,) + w.shape[1:]
        self.weight_g = Parameter(self._norm(w).reshape(g_shape), dtype=w.dtype)  # g = ||w||
        self.weight_v = Parameter(w.copy(), dtype=w.dtype)        # v = w

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, dim={self.dim}"

    @property
    def _axes(self) -> tuple[int, ...]:
        """A: the axes of v each norm sums over, every axis but ``dim``."""
        return (0, 1) if self.dim is None else (1 - self.dim,)

    def _norm(self, v: np.ndarray) -> np.ndarray:
        """||v|| per slice along ``dim``: sqrt(sum_A(v**2)), kept dims ((out, 1), (1, in) or (1, 1))."""
        return np.sqrt(np.sum(v ** 2, axis=self._axes, keepdims=True))

    def compute_weight(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(w, v_hat, g / norm): w = g * v / ||v||, v_hat = v / ||v|| (out, in), g / ||v|| (g's shape, kept dims)."""
        v = self.weight_v.data                                    # (out, in)
        norm = self._norm(v)                                      # (out, 1), (1, in) or (1, 1)
        g = self.weight_g.data.reshape(norm.shape)                # like norm
        return g * v / norm, v / norm, g / norm                   # (out, in), (out, in), like norm

    def forward(self, x: ArrayLike) -> np.ndarray:
        w, v_hat, g_over_norm = self.compute_weight()             # (out, in)
        y = self.forward_with(x, w)                               # (*, out)  the Linear's, with w
        self._cache = (self._cache, w, v_hat, g_over_norm)
        return y

    def backward(self, dy: ArrayLike) -> np.ndarray:
        linear_cache, w, v_hat, g_over_norm = self._cached()
        dx, dw = self.backward_with(dy, w, linear_cache)          # (*, in), (out, in); adds db
        dg = np.sum(dw * v_hat, axis=self._axes, keepdims=True)   # like norm: (dw . v) / ||v|| per slice
        dv = g_over_norm * (dw - dg * v_hat)                      # (out, in)  orthogonal to v
        self.weight_g.grad += dg.reshape(self.weight_g.shape).astype(self.weight_g.dtype, copy=False)
        self.weight_v.grad += dv.astype(self.weight_v.dtype, copy=False)
        return dx

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> Self:
        """``Module.load_state_dict``, the keys of torch's parametrization API renamed first."""
        if isinstance(state_dict, Mapping):
            state_dict = {TORCH_PARAMETRIZATION_KEYS.get(k, k): v for k, v in state_dict.items()}
        return super().load_state_dict(state_dict)
