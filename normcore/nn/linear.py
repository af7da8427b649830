"""``Linear``: the fully connected layer, and the weight initialisations it offers."""

import math

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import (RngLike, check_upstream, compute_dtype, flag, float_input, make_rng, positive_int,
                      real_number)
from ..module import Module, Parameter

INITS = ("xavier", "xavier_normal", "kaiming", "kaiming_uniform", "torch")


def init_weight(fan_out: int, fan_in: int, init: str = "xavier", gain: float = 1.0,
                rng: RngLike = None) -> np.ndarray:
    """A (fan_out, fan_in) weight drawn by the named scheme and scaled by ``gain``::

        init               distribution                                     variance
        "xavier"           U(-a, a),   a = gain * sqrt(6 / (fan_in + fan_out))  gain**2 * 2 / (fan_in + fan_out)
        "xavier_normal"    N(0, s**2), s = gain * sqrt(2 / (fan_in + fan_out))  the same
        "kaiming"          N(0, s**2), s = gain * sqrt(2 / fan_in)              gain**2 * 2 / fan_in
        "kaiming_uniform"  U(-a, a),   a = gain * sqrt(6 / fan_in)              the same
        "torch"            U(-a, a),   a = gain / sqrt(fan_in)                  gain**2 / (3 * fan_in)

    Xavier (Glorot and Bengio, 2010) keeps the variance of activations and of gradients about
    constant through a linear layer; Kaiming (He et al., 2015) doubles it to make up for the half
    of the units a ReLU zeroes (the factor 2 is PyTorch's ``calculate_gain("relu")``, built in
    here). ``"torch"`` is what ``torch.nn.Linear`` draws by default. ``gain`` rescales any of
    them; DeepNorm uses it to shrink some projections by beta = (8N)**(-1/4).
    """
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")
    rng = make_rng(rng)
    shape = (fan_out, fan_in)
    if init == "xavier":
        a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    elif init == "kaiming_uniform":
        a = gain * math.sqrt(6.0 / fan_in)
    elif init == "torch":
        a = gain / math.sqrt(fan_in)
    elif init == "xavier_normal":
        return rng.normal(0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), shape)
    else:  # kaiming
        return rng.normal(0.0, gain * math.sqrt(2.0 / fan_in), shape)
    return rng.uniform(-a, a, shape)


class _LinearBase(Module):
    """What ``Linear``, ``WSLinear`` and ``WeightNorm`` share: the sizes, the bias, and the
    arithmetic ``y = x W^T + b`` with the weight W given (``forward_with``, ``backward_with``),
    which ``Linear`` uses with its ``weight`` and the other two with the weight they compute.
    Only ``Linear`` is a ``Linear``: the bridge to PyTorch and ``fold_batchnorm`` take it alone."""

    weight: Parameter
    bias: Parameter | None

    def __init__(self, in_features: int, out_features: int, bias: bool = True, init: str = "xavier",
                 gain: float = 1.0, rng: RngLike = None, dtype: DTypeLike = np.float64) -> None:
        who = type(self).__name__
        self.in_features = positive_int(in_features, "in_features", who)
        self.out_features = positive_int(out_features, "out_features", who)
        self.init, self.gain = init, real_number(gain, "gain", who)
        rng = make_rng(rng)
        weight = init_weight(self.out_features, self.in_features, init, self.gain, rng)  # (out, in)
        self.weight = Parameter(weight, dtype=dtype)
        if flag(bias, "bias", who):
            bound = 1.0 / math.sqrt(self.in_features) if init == "torch" else 0.0
            self.bias = Parameter(rng.uniform(-bound, bound, self.out_features), dtype=dtype)
        else:
            self.bias = None

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"

    def forward_with(self, x: ArrayLike, W: np.ndarray) -> np.ndarray:
        """y = x @ W.T + b with the weight ``W`` (out, in); caches a copy of x."""
        who = type(self).__name__
        x = float_input(x, who)
        if x.ndim < 1 or x.shape[-1] != self.in_features:
            raise ValueError(
                f"{who}({self.in_features}, {self.out_features}) expects input of shape "
                f"(*, {self.in_features}), got {x.shape}"
            )
        xc = x.astype(compute_dtype(x.dtype))  # (*, in), a private copy: the caller may overwrite x
        y = xc @ W.astype(xc.dtype, copy=False).T  # (*, out)
        if self.bias is not None:
            y = y + self.bias.data.astype(xc.dtype, copy=False)
        self._cache = (xc, x.dtype)
        return y.astype(x.dtype, copy=False)

    def backward_with(self, dy: ArrayLike, W: np.ndarray,
                      cache: tuple | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(dx, dW) for the last forward with the weight ``W``; adds db to ``bias.grad``.
        ``cache`` is what that forward cached, when a subclass keeps it inside its own."""
        x, in_dtype = cache if cache is not None else self._cached()
        who = type(self).__name__
        dy = check_upstream(dy, x.shape[:-1] + (self.out_features,), who).astype(x.dtype, copy=False)
        dy_rows = dy.reshape(-1, self.out_features)  # (N, out)
        dW = dy_rows.T @ x.reshape(-1, self.in_features)  # (out, in)
        if self.bias is not None:
            self.bias.grad += dy_rows.sum(axis=0)  # (out,)
        dx = dy @ W.astype(x.dtype, copy=False)  # (*, in)
        return dx.astype(in_dtype, copy=False), dW


class Linear(_LinearBase):
    r"""Fully connected layer: ``y = x W^T + b`` on the last axis.

    Shapes: x (*, in_features), W = ``weight`` (out_features, in_features), b = ``bias``
    (out_features,), y (*, out_features). Forward and backward, with N = prod(*) rows::

        y  = x @ W.T + b                   (*, out)
        dW = dy.reshape(N, out).T @ x.reshape(N, in)     (out, in)   summed over all rows
        db = sum over rows of dy           (out,)
        dx = dy @ W                        (*, in)

    ``init`` names the weight distribution (see ``init_weight``: "xavier" (default),
    "xavier_normal", "kaiming", "kaiming_uniform", "torch") and ``gain`` scales it. The bias
    starts at zero, except with ``init="torch"`` where it is U(-1/sqrt(in), 1/sqrt(in)) as in
    PyTorch. ``rng`` is None, an int seed or a ``np.random.Generator``. Parameter names and
    shapes are PyTorch's, so a ``torch.nn.Linear`` state dict loads as is. Cache: a copy of x.
    """

    def forward(self, x: ArrayLike) -> np.ndarray:
        return self.forward_with(x, self.weight.data)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        dx, dW = self.backward_with(dy, self.weight.data)
        self.weight.grad += dW  # (out, in)
        return dx
