"""The bookkeeping every norm layer shares, and none of its arithmetic.

``_Norm`` holds what is the same for every norm and is not a formula: checking the input and
the upstream gradient, the dtypes, creating gamma and beta, adding their gradients, and
BatchNorm's and InstanceNorm's running statistics. Each norm writes its own ``forward`` and
``backward`` in its own file, in the names of its docstring.

Dtypes: the output has the input's dtype; float16 inputs are computed in float32 and cast back
once at the end; gamma and beta are cast to that compute dtype; gradients are added (``+=``)
to ``Parameter.grad`` in the parameter's own dtype.
"""

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (FLOAT_DTYPES, ShapeLike, check_upstream, compute_dtype, flag, float_input, positive_int,
                      real_number)
from ..module import Module, Parameter


class _Norm(Module):
    """Bookkeeping for a norm layer; each subclass writes its own forward and backward."""

    weight: Parameter | None = None  # gamma
    bias: Parameter | None = None  # beta
    eps: Any  # a float; RMSNorm's is None for the input dtype's machine epsilon
    # BatchNorm's and InstanceNorm's running statistics: arrays, or None when not tracked
    # (their forward reads them only when tracked, hence Any rather than ``np.ndarray | None``)
    momentum: float | None
    track_running_stats: bool
    running_mean: Any
    running_var: Any
    num_batches_tracked: Any

    @property
    def gamma(self) -> Parameter | None:
        """The scale gamma (the ``weight`` Parameter), or None when the layer has no affine."""
        return self.weight

    @property
    def beta(self) -> Parameter | None:
        """The shift beta (the ``bias`` Parameter), or None."""
        return self.bias

    # --- construction ---------------------------------------------------------------------
    def _make_affine(self, shape: tuple[int, ...], scale: bool, shift: bool, dtype: DTypeLike) -> None:
        """gamma = ones(shape) if ``scale``, beta = zeros(shape) if ``shift``."""
        dtype = param_dtype(dtype, type(self).__name__)
        if scale:
            self.weight = Parameter(np.ones(shape), dtype=dtype)
        if shift:
            self.bias = Parameter(np.zeros(shape), dtype=dtype)

    def _make_channel_affine(self, num_channels: int, affine: bool, bias: bool, dtype: DTypeLike) -> None:
        """The affine of BatchNorm, InstanceNorm and GroupNorm: gamma of shape (C,) when
        ``affine``, and beta too unless ``bias=False``. Without ``affine`` there is neither,
        whatever ``bias`` says (as in PyTorch)."""
        who = type(self).__name__
        self.affine = flag(affine, "affine", who)
        bias = flag(bias, "bias", who)
        self._make_affine((num_channels,), self.affine, self.affine and bias, dtype)

    def _make_channel_norm(self, num_features: int, eps: float, momentum: float | None, affine: bool,
                           track_running_stats: bool, dtype: DTypeLike, bias: bool) -> None:
        """What BatchNorm's and InstanceNorm's constructors do (only their defaults differ):
        num_features, eps, gamma and beta of shape (C,) when ``affine`` (no beta with
        ``bias=False``), the running statistics."""
        who = type(self).__name__
        self.num_features = positive_int(num_features, "num_features", who)
        self.eps = eps_arg(eps, who)
        self._make_channel_affine(self.num_features, affine, bias, dtype)
        self._make_running_stats(self.num_features, momentum, track_running_stats, dtype)

    def extra_repr(self) -> str:  # BatchNorm's and InstanceNorm's; the other norms write their own
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")

    def _make_running_stats(self, num_features: int, momentum: float | None, track_running_stats: bool,
                            dtype: DTypeLike) -> None:
        """momentum and, when tracked, the buffers running_mean = 0, running_var = 1 and
        num_batches_tracked = 0 (PyTorch's names, order and initial values)."""
        who = type(self).__name__
        self.momentum = real_number(momentum, "momentum", who, 0.0, 1.0, allow_none=True)
        self.track_running_stats = flag(track_running_stats, "track_running_stats", who)
        if self.track_running_stats:
            dtype = param_dtype(dtype, who)
            self.register_buffer("running_mean", np.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", np.ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", np.array(0, dtype=np.int64))
        else:
            self.running_mean = self.running_var = self.num_batches_tracked = None

    # --- forward and backward helpers ---------------------------------------------------------
    def _input(self, x: ArrayLike) -> tuple[np.ndarray, np.dtype]:
        """(x in the compute dtype, x's own dtype), after checking it is a float array of a
        shape the layer takes (``_check_shape``)."""
        x = float_input(x, type(self).__name__)
        self._check_shape(x)
        return x.astype(compute_dtype(x.dtype), copy=False), x.dtype

    def _check_shape(self, x: np.ndarray) -> None:
        """Raise ValueError if x's shape does not fit the layer."""

    def _upstream(self, dy: ArrayLike, x_hat: np.ndarray) -> np.ndarray:
        """dy checked against the output's shape (x_hat's), in the compute dtype."""
        return check_upstream(dy, x_hat.shape, type(self).__name__).astype(x_hat.dtype, copy=False)

    def _gamma_beta(self, dtype: DTypeLike,
                    shape: tuple[int, ...]) -> tuple[np.ndarray | int, np.ndarray | int]:
        """gamma and beta in ``dtype``, reshaped to broadcast against x_hat; 1 and 0 when the
        layer has none, so that ``x_hat * gamma + beta`` holds for every configuration."""
        gamma = 1 if self.weight is None else self.weight.data.astype(dtype, copy=False).reshape(shape)
        beta = 0 if self.bias is None else self.bias.data.astype(dtype, copy=False).reshape(shape)
        return gamma, beta

    def _add_grads(self, dgamma: Any, dbeta: Any) -> None:
        """gamma.grad += dgamma, beta.grad += dbeta, for the parameters the layer has."""
        for p, g in ((self.weight, dgamma), (self.bias, dbeta)):
            if p is not None:
                p.grad += g.reshape(p.shape).astype(p.dtype, copy=False)

    _counts_batches = True  # InstanceNorm, as in PyTorch, leaves num_batches_tracked at 0

    def _update_running_stats(self, mean: np.ndarray, var: np.ndarray, n: int) -> None:
        """running = (1 - m) * running + m * batch, per channel.

        ``mean`` and ``var`` are the batch's statistics with kept dims, (1, C, 1...) for
        BatchNorm or one row per sample (N, C, 1...) for InstanceNorm, whose per-sample
        statistics are averaged; n is how many values each was taken over, and var * n / (n - 1)
        the unbiased variance that goes into running_var. m is ``momentum``; with
        ``momentum=None`` it is 1 / num_batches_tracked (the plain average of every batch so
        far), or 0 for InstanceNorm, which counts no batches. An empty batch changes nothing
        but the count.
        """
        if self._counts_batches:
            self.num_batches_tracked += 1
        if mean.size == 0 or n == 0:                               # an empty batch: no statistics
            return
        batch_mean = mean.reshape(-1, self.num_features).mean(axis=0)               # (C,)
        batch_var = var.reshape(-1, self.num_features).mean(axis=0) * n / (n - 1)   # (C,) unbiased
        if self.momentum is not None:
            m = self.momentum
        else:
            m = 1.0 / float(self.num_batches_tracked) if self._counts_batches else 0.0
        self.running_mean[...] = (1 - m) * self.running_mean + m * batch_mean
        self.running_var[...] = (1 - m) * self.running_var + m * batch_var


def channel_shape(num_channels: int, ndim: int) -> tuple[int, ...]:
    """The shape a per-channel array takes to broadcast against (N, C, *spatial): (1, C, 1, ...)."""
    return (1, num_channels) + (1,) * (ndim - 2)


def param_dtype(dtype: DTypeLike, who: str) -> np.dtype:
    """``dtype`` as a NumPy float dtype, or a TypeError saying which are accepted."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        dt = None
    if dt is None or dt.type not in FLOAT_DTYPES:
        raise TypeError(f"{who}: dtype must be float16, float32 or float64, got {dtype!r}")
    return dt


def normalized_shape_arg(normalized_shape: ShapeLike, who: str) -> tuple[int, ...]:
    """An int n, or a tuple/list of ints, as a tuple of positive ints; else a clear error."""
    shape = normalized_shape
    if isinstance(shape, numbers.Integral) and not isinstance(shape, bool):
        shape = (shape,)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"{who}: normalized_shape must be an int or a tuple of ints, "
                        f"got {normalized_shape!r} ({type(normalized_shape).__name__})")
    if not shape:
        raise ValueError(f"{who}: normalized_shape must be a positive int or a non-empty tuple of them, "
                         f"got {normalized_shape!r}")
    return tuple(positive_int(n, "normalized_shape", who) for n in shape)


def eps_arg(eps: float, who: str) -> float:
    """eps as a finite float >= 0."""
    return real_number(eps, "eps", who, low=0.0)


class _TrailingAxesNorm(_Norm):
    """A norm over the last ``len(normalized_shape)`` axes D, with gamma of that shape
    (LayerNorm, RMSNorm): the constructor's shape argument, the input check and the axes."""

    normalized_shape: tuple[int, ...]
    elementwise_affine: bool

    def _set_normalized_shape(self, normalized_shape: ShapeLike) -> None:
        self.normalized_shape = normalized_shape_arg(normalized_shape, type(self).__name__)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"

    @property
    def _axes(self) -> tuple[int, ...]:
        """D, the normalised axes: the last len(normalized_shape) ones, as negative indices."""
        return tuple(range(-len(self.normalized_shape), 0))

    def _check_shape(self, x: np.ndarray) -> None:
        k = len(self.normalized_shape)
        if x.ndim < k or x.shape[-k:] != self.normalized_shape:
            raise ValueError(
                f"Given normalized_shape={list(self.normalized_shape)}, expected input with shape "
                f"[*, {', '.join(map(str, self.normalized_shape))}], but got input of size {list(x.shape)}"
            )
