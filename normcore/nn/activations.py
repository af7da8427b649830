"""Element-wise activations (ReLU, GELU, Sigmoid, Tanh) and the numerically stable softmax.

``softmax`` and ``softmax_backward`` are the one place the softmax formulas live; attention
and the ``Softmax`` layer both call them.
"""

import math

import numpy as np

from .._array import check_upstream, compute_dtype, float_input, integer
from ..module import Module


def softmax(x, axis=-1):
    """p = exp(x - max(x)) / sum(exp(x - max(x))) along ``axis``.

    Subtracting the row maximum changes nothing mathematically (it cancels between numerator
    and denominator) but keeps every exponent <= 0, so exp never overflows; a row of -inf
    entries except one (a causal mask) still gives finite probabilities. ``initial=-inf`` makes
    the maximum of an empty axis -inf instead of an error: an empty input gives an empty
    output, as in PyTorch.
    """
    z = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return z / np.sum(z, axis=axis, keepdims=True)


def softmax_backward(dp, p, axis=-1):
    """dL/dx from dL/dp for p = softmax(x):  dx = p * (dp - sum(dp * p)) along ``axis``.

    The Jacobian is dp_i/dx_j = p_i (delta_ij - p_j); multiplying by dp gives the line above
    without ever forming the (n, n) Jacobian.
    """
    return p * (dp - np.sum(dp * p, axis=axis, keepdims=True))


class _Elementwise(Module):
    """Shared bookkeeping: check the input, compute in float32 for float16, cast back.

    A subclass writes ``_f(x) -> (y, saved)`` and ``_df(dy, saved) -> dx`` only. What it saves
    must stay private: a subclass whose ``saved`` holds x sets ``saves_input`` (``_f`` then
    gets a copy of the caller's array), one whose ``saved`` holds y sets ``saves_output`` (the
    caller gets a copy of y). A float16 input needs neither: its cast to float32 is a copy.
    """

    saves_input = False
    saves_output = False

    def forward(self, x):
        x = float_input(x, type(self).__name__)
        y, saved = self._f(x.astype(compute_dtype(x.dtype), copy=self.saves_input))
        self._cache = (saved, x.shape, x.dtype)
        return y.astype(x.dtype, copy=self.saves_output)

    def backward(self, dy):
        saved, shape, in_dtype = self._cached()
        dy = check_upstream(dy, shape, type(self).__name__)
        return self._df(dy.astype(compute_dtype(in_dtype), copy=False), saved).astype(in_dtype, copy=False)


class ReLU(_Elementwise):
    r"""y = max(x, 0);  dx = dy where x > 0, and 0 where x <= 0 (at exactly 0 too, as in PyTorch).

    As in PyTorch, ReLU(inf) = inf, ReLU(-inf) = 0 and NaN propagates (its gradient passes dy
    through). ``x * (x > 0)`` would give NaN at -inf (-inf * 0), and ``dy * mask`` NaN where dy
    is inf and the unit is off; ``np.maximum`` and ``np.where`` pick values instead.

    Any shape. Cache: the mask x <= 0 of the units switched off.
    """

    def _f(self, x):
        off = x <= 0
        return np.maximum(x, 0), off

    def _df(self, dy, off):
        return np.where(off, 0, dy)


class GELU(_Elementwise):
    r"""GELU in its tanh approximation (PyTorch's ``GELU(approximate="tanh")``).

    Forward, with k = sqrt(2 / pi) and c = 0.044715::

        u = k * (x + c * x**3)
        t = tanh(u)
        y = 0.5 * x * (1 + t)

    Backward (product rule, then d tanh(u)/du = 1 - t**2)::

        dx = dy * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * k * (1 + 3 * c * x**2))

    Any shape. Cache: x (a copy) and t.
    """

    saves_input = True  # the cache holds x

    k = math.sqrt(2.0 / math.pi)
    c = 0.044715

    def _f(self, x):
        t = np.tanh(self.k * (x + self.c * x * x * x))
        return 0.5 * x * (1.0 + t), (x, t)

    def _df(self, dy, saved):
        x, t = saved
        return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * self.k * (1.0 + 3.0 * self.c * x * x))


class Sigmoid(_Elementwise):
    r"""y = 1 / (1 + exp(-x)), computed as 0.5 * (1 + tanh(x / 2)) so no exp can overflow;
    dx = dy * y * (1 - y).  Any shape. Cache: y."""

    saves_output = True  # the cache holds y

    def _f(self, x):
        y = 0.5 * (1.0 + np.tanh(0.5 * x))
        return y, y

    def _df(self, dy, y):
        return dy * y * (1.0 - y)


class Tanh(_Elementwise):
    r"""y = tanh(x);  dx = dy * (1 - y**2).  Any shape. Cache: y."""

    saves_output = True  # the cache holds y

    def _f(self, x):
        y = np.tanh(x)
        return y, y

    def _df(self, dy, y):
        return dy * (1.0 - y * y)


class Softmax(_Elementwise):
    r"""Numerically stable softmax along ``axis`` (default the last).

    Forward and backward (sums along ``axis``)::

        y  = exp(x - max(x)) / sum(exp(x - max(x)))
        dx = y * (dy - sum(dy * y))

    Any shape. Cache: y.
    """

    saves_output = True  # the cache holds y

    def __init__(self, axis=-1):
        self.axis = integer(axis, "axis", "Softmax")

    def extra_repr(self):
        return f"axis={self.axis}"

    def _f(self, x):
        if not -x.ndim <= self.axis < x.ndim:
            raise ValueError(f"Softmax(axis={self.axis}) needs an input with that axis, got shape {x.shape}")
        y = softmax(x, self.axis)
        return y, y

    def _df(self, dy, y):
        return softmax_backward(dy, y, self.axis)


ACTIVATIONS = {"relu": ReLU, "gelu": GELU, "sigmoid": Sigmoid, "tanh": Tanh}
