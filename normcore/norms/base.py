"""What every norm layer shares: input checks, dtypes, and the affine step y = x_hat * gamma + beta.

A norm is two steps. The *normalisation* x -> x_hat differs per layer and lives in the layer's
own file (``_normalize`` / ``_normalize_backward``). The *affine* step is the same everywhere:

    forward:   y = x_hat * gamma + beta
    backward:  dgamma = sum(dy * x_hat),  dbeta = sum(dy)   (over every axis gamma is broadcast on)
               dx_hat = dy * gamma

so it is written once, here. The forward caches ``x_hat`` (one array of the input's size) and
whatever small statistics the layer's backward needs (e.g. ``rstd``), nothing else.

Dtypes: the output has the input's dtype; float16 inputs are computed in float32 and cast back
once at the end; parameters are cast to the compute dtype; gradients are accumulated (``+=``)
into ``Parameter.grad`` in the parameter's own dtype.
"""

import numpy as np

from .._array import check_upstream, compute_dtype, float_input, sum_to_shape
from ..module import Module, Parameter


class _Norm(Module):
    """Bookkeeping for a norm layer; subclasses supply the normalisation and its backward."""

    weight = None  # gamma, a Parameter or None
    bias = None  # beta, a Parameter or None

    @property
    def gamma(self):
        """The scale gamma (the ``weight`` Parameter), or None when the layer has no affine."""
        return self.weight

    @property
    def beta(self):
        """The shift beta (the ``bias`` Parameter), or None."""
        return self.bias

    def _make_affine(self, shape, scale, shift, dtype):
        if scale:
            self.weight = Parameter(np.ones(shape), dtype=dtype)
        if shift:
            self.bias = Parameter(np.zeros(shape), dtype=dtype)

    # --- subclass hooks ------------------------------------------------------------------------
    def _check_shape(self, x):
        """Raise ValueError if x's shape does not fit the layer."""

    def _param_view(self, x):
        """The shape gamma and beta take to broadcast against x (e.g. (1, C, 1) for BatchNorm1d)."""
        raise NotImplementedError

    def _normalize(self, x):
        """x -> (x_hat, stats): stats is what _normalize_backward needs besides x_hat."""
        raise NotImplementedError

    def _normalize_backward(self, dx_hat, x_hat, stats):
        """dL/dx_hat -> dL/dx."""
        raise NotImplementedError

    # --- forward and backward ------------------------------------------------------------------
    def forward(self, x):
        name = type(self).__name__
        x = float_input(x, name)
        self._check_shape(x)
        ctype = compute_dtype(x.dtype)
        x_hat, stats = self._normalize(x.astype(ctype, copy=False))
        view = self._param_view(x)
        # y = x_hat * gamma + beta, in a new array (the cached x_hat stays private to the layer)
        if self.weight is not None:
            y = x_hat * self.weight.data.astype(ctype, copy=False).reshape(view)
        else:
            y = x_hat.copy()
        if self.bias is not None:
            y += self.bias.data.astype(ctype, copy=False).reshape(view)
        self._cache = (x_hat, stats, x.dtype, view)
        return y.astype(x.dtype, copy=False)

    def backward(self, dy):
        x_hat, stats, in_dtype, view = self._cached()
        dy = check_upstream(dy, x_hat.shape, type(self).__name__).astype(x_hat.dtype, copy=False)
        if self.bias is not None:
            self.bias.grad += sum_to_shape(dy, view).reshape(self.bias.shape)
        if self.weight is not None:
            self.weight.grad += sum_to_shape(dy, view, times=x_hat).reshape(self.weight.shape)
            dx_hat = dy * self.weight.data.astype(x_hat.dtype, copy=False).reshape(view)
        else:
            dx_hat = dy
        dx = self._normalize_backward(dx_hat, x_hat, stats)
        return dx.astype(in_dtype, copy=False)


def channel_view(num_channels, ndim):
    """The shape a per-channel array takes to broadcast against (N, C, *spatial): (1, C, 1, ...)."""
    return (1, num_channels) + (1,) * (ndim - 2)


class _TrailingAxesNorm(_Norm):
    """A norm over the last ``len(normalized_shape)`` axes, with parameters of that shape."""

    def _set_normalized_shape(self, normalized_shape):
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = (int(normalized_shape),)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        if not self.normalized_shape or min(self.normalized_shape) < 1:
            raise ValueError(
                f"normalized_shape must be a positive int or a non-empty tuple of them, got {normalized_shape}"
            )

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

    @property
    def _axes(self):
        """The normalised axes D: the last len(normalized_shape) ones."""
        return tuple(range(-len(self.normalized_shape), 0))

    def _check_shape(self, x):
        k = len(self.normalized_shape)
        if x.ndim < k or x.shape[-k:] != self.normalized_shape:
            raise ValueError(
                f"Given normalized_shape={list(self.normalized_shape)}, expected input with shape "
                f"[*, {', '.join(map(str, self.normalized_shape))}], but got input of size {list(x.shape)}"
            )

    def _param_view(self, x):
        return self.normalized_shape
