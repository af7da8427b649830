"""The fast tier's layers: each one is its reference-tier class with ``forward`` and
``backward`` replaced by calls to the blocked kernels in ``kernels.py``.

Constructors, argument checks, parameters, running statistics, ``state_dict``, train/eval and
error messages are inherited from ``normcore.norms``, so a fast layer and a reference layer are
interchangeable (``load_state_dict`` either way) and differ only in speed. What each method
does is documented on the reference class; here only the plumbing: the input in the compute
dtype and C order (a copy only when it is not already), the reshape to the kernel's layout,
and what is cached.
"""

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .. import norms
from ..module import Parameter
from ..norms.base import _Norm, _TrailingAxesNorm
from ..norms.batchnorm import _BatchNorm as _ReferenceBatchNorm
from ..norms.groupnorm import _InstanceNorm as _ReferenceInstanceNorm
from . import kernels


class _Fast(_Norm):
    """What every fast layer adds to its reference class."""

    def _contiguous_input(self, x: ArrayLike) -> tuple[np.ndarray, np.dtype]:
        """(x checked, in the compute dtype and C order, x's own dtype). The caller's array
        itself when it already is that; the kernels only read it."""
        x, in_dtype = self._input(x)
        return np.ascontiguousarray(x), in_dtype

    def _contiguous_upstream(self, dy: ArrayLike, x_hat: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(self._upstream(dy, x_hat))

    def _vector(self, param: Parameter | None, dtype: DTypeLike) -> np.ndarray | None:
        """A parameter's data as a flat vector in ``dtype``; None when the layer has none."""
        return None if param is None else param.data.astype(dtype, copy=False).reshape(-1)


def _channels(a: np.ndarray, batched_ndim: int | None = None) -> np.ndarray:
    """(N, C, *S) -> (N, C, L), L = prod(S); an unbatched (C, *S) becomes (1, C, L)."""
    if batched_ndim is not None and a.ndim < batched_ndim:
        a = a[None]
    return a.reshape(a.shape[0], a.shape[1], math.prod(a.shape[2:]))


class _FastTrailing(_Fast, _TrailingAxesNorm):
    def _rows(self, a: np.ndarray) -> np.ndarray:
        """(*, normalized_shape) -> (R, n): one row per sample."""
        return a.reshape(-1, math.prod(self.normalized_shape))


class LayerNorm(_FastTrailing, norms.LayerNorm):
    __doc__ = ("The fast tier's LayerNorm (``normcore.fast.kernels.standardize_rows``).\n\n"
               f"{norms.LayerNorm.__doc__}")

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._contiguous_input(x)
        gamma, beta = (self._vector(p, x.dtype) for p in (self.weight, self.bias))
        rows = self._rows(x)[:, :, None]                   # (R, n, 1): n channels of one value
        y, x_hat, rstd, _, _ = kernels.standardize_rows(rows, 1, self.eps, gamma, beta, in_dtype)
        self._cache = (x_hat.reshape(x.shape), rstd, in_dtype)
        return y.reshape(x.shape)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, in_dtype = self._cached()
        dy = self._contiguous_upstream(dy, x_hat)
        gamma = self._vector(self.weight, x_hat.dtype)
        dx, dgamma, dbeta = kernels.standardize_rows_backward(self._rows(dy)[:, :, None], self._rows(x_hat)[:, :, None],
                                                              rstd, 1, gamma, in_dtype)
        self._add_grads(dgamma, dbeta)
        return dx.reshape(x_hat.shape)


class RMSNorm(_FastTrailing, norms.RMSNorm):
    __doc__ = f"The fast tier's RMSNorm (``normcore.fast.kernels.rms_rows``).\n\n{norms.RMSNorm.__doc__}"

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._contiguous_input(x)
        eps = np.finfo(x.dtype).eps if self.eps is None else self.eps
        y, x_hat, rrms = kernels.rms_rows(self._rows(x), eps, self._vector(self.weight, x.dtype), in_dtype)
        self._cache = (x_hat.reshape(x.shape), rrms, in_dtype)
        return y.reshape(x.shape)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rrms, in_dtype = self._cached()
        dy = self._contiguous_upstream(dy, x_hat)
        gamma = self._vector(self.weight, x_hat.dtype)
        dx, dgamma = kernels.rms_rows_backward(self._rows(dy), self._rows(x_hat), rrms, gamma, in_dtype)
        self._add_grads(dgamma, None)
        return dx.reshape(x_hat.shape)


class _BatchNorm(_Fast, _ReferenceBatchNorm):
    """BatchNorm1d, 2d and 3d: ``kernels.standardize_channels`` with the batch's
    statistics, ``kernels.normalize_channels`` with the running ones. The cache is
    (xc, shift, rstd) with x_hat = (xc - shift) * rstd per channel (see the kernels)."""

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._contiguous_input(x)
        n = x.size // self.num_features                    # values per channel
        batch_stats = self.training or not self.track_running_stats
        if batch_stats:
            self._check_batch(x, n)
        gamma, beta = (self._vector(p, x.dtype) for p in (self.weight, self.bias))
        if batch_stats:
            y, xc, shift, rstd, mean, var = kernels.standardize_channels(_channels(x), self.eps, gamma, beta,
                                                                         in_dtype)
        else:
            rstd = 1.0 / np.sqrt(self.running_var.astype(np.float64) + self.eps)
            y, xc, shift = kernels.normalize_channels(_channels(x), self.running_mean.astype(np.float64), rstd,
                                                      gamma, beta, in_dtype)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var, n)
        self._cache = (xc.reshape(x.shape), shift, rstd, batch_stats, in_dtype)
        return y.reshape(x.shape)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        xc, shift, rstd, batch_stats, in_dtype = self._cached()
        dy = self._contiguous_upstream(dy, xc)
        gamma = self._vector(self.weight, xc.dtype)
        dx, dgamma, dbeta = kernels.standardize_channels_backward(_channels(dy), _channels(xc), shift, rstd, gamma,
                                                                  batch_stats, in_dtype)
        self._add_grads(dgamma, dbeta)
        return dx.reshape(xc.shape)


class BatchNorm1d(_BatchNorm, norms.BatchNorm1d):
    __doc__ = f"The fast tier's BatchNorm1d.\n\n{norms.BatchNorm1d.__doc__}"


class BatchNorm2d(_BatchNorm, norms.BatchNorm2d):
    __doc__ = f"The fast tier's BatchNorm2d.\n\n{norms.BatchNorm2d.__doc__}"


class BatchNorm3d(_BatchNorm, norms.BatchNorm3d):
    __doc__ = f"The fast tier's BatchNorm3d.\n\n{norms.BatchNorm3d.__doc__}"


class GroupNorm(_Fast, norms.GroupNorm):
    __doc__ = "The fast tier's GroupNorm (``kernels.standardize_rows``, one row per group).\n\n" \
        f"{norms.GroupNorm.__doc__}"

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._contiguous_input(x)
        gamma, beta = (self._vector(p, x.dtype) for p in (self.weight, self.bias))
        y, x_hat, rstd, _, _ = kernels.standardize_rows(_channels(x), self.num_groups, self.eps, gamma, beta,
                                                        in_dtype)
        self._cache = (x_hat.reshape(x.shape), rstd, in_dtype)
        return y.reshape(x.shape)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, rstd, in_dtype = self._cached()
        dy = self._contiguous_upstream(dy, x_hat)
        dx, dgamma, dbeta = kernels.standardize_rows_backward(_channels(dy), _channels(x_hat), rstd, self.num_groups,
                                                              self._vector(self.weight, x_hat.dtype), in_dtype)
        self._add_grads(dgamma, dbeta)
        return dx.reshape(x_hat.shape)


class _InstanceNorm(_Fast, _ReferenceInstanceNorm):
    """InstanceNorm1d, 2d and 3d: ``kernels.standardize_rows`` with one row per
    (sample, channel) in training (cache: x_hat, rstd), ``kernels.normalize_channels`` with the
    running statistics (cache: xc, shift, rstd, as BatchNorm's)."""

    def forward(self, x: ArrayLike) -> np.ndarray:
        x, in_dtype = self._contiguous_input(x)
        x3 = _channels(x, self._ndim)                      # (N, C, L)
        C, L = x3.shape[1:]
        instance_stats = self.training or not self.track_running_stats
        if instance_stats:
            self._check_instances(x, L)
        gamma, beta = (self._vector(p, x.dtype) for p in (self.weight, self.bias))
        shift = None
        if instance_stats:
            y, x_hat, rstd, mean, var = kernels.standardize_rows(x3, C, self.eps, gamma, beta, in_dtype)
        else:
            rstd = 1.0 / np.sqrt(self.running_var.astype(np.float64) + self.eps)
            y, x_hat, shift = kernels.normalize_channels(x3, self.running_mean.astype(np.float64), rstd, gamma,
                                                         beta, in_dtype)
        if self.training and self.track_running_stats:
            self._update_running_stats(mean, var, L)
        self._cache = (x_hat.reshape(x.shape), shift, rstd, instance_stats, in_dtype)
        return y.reshape(x.shape)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        x_hat, shift, rstd, instance_stats, in_dtype = self._cached()
        dy = self._contiguous_upstream(dy, x_hat)
        dy3, x_hat3 = _channels(dy, self._ndim), _channels(x_hat, self._ndim)
        gamma = self._vector(self.weight, x_hat.dtype)
        if instance_stats:
            dx, dgamma, dbeta = kernels.standardize_rows_backward(dy3, x_hat3, rstd, x_hat3.shape[1], gamma, in_dtype)
        else:
            dx, dgamma, dbeta = kernels.standardize_channels_backward(dy3, x_hat3, shift, rstd, gamma, False,
                                                                      in_dtype)
        self._add_grads(dgamma, dbeta)
        return dx.reshape(x_hat.shape)


class InstanceNorm1d(_InstanceNorm, norms.InstanceNorm1d):
    __doc__ = f"The fast tier's InstanceNorm1d.\n\n{norms.InstanceNorm1d.__doc__}"


class InstanceNorm2d(_InstanceNorm, norms.InstanceNorm2d):
    __doc__ = f"The fast tier's InstanceNorm2d.\n\n{norms.InstanceNorm2d.__doc__}"


class InstanceNorm3d(_InstanceNorm, norms.InstanceNorm3d):
    __doc__ = f"The fast tier's InstanceNorm3d.\n\n{norms.InstanceNorm3d.__doc__}"
