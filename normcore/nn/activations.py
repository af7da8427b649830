"""Element-wise activations (ReLU, GELU, Sigmoid, Tanh), the numerically stable softmax and
log-softmax, and a vectorised erf for the exact GELU.

``softmax`` and ``softmax_backward`` are the one place the softmax formulas live; attention
and the ``Softmax`` layer both call them. ``log_softmax`` is the one place of the log-softmax;
``LogSoftmax`` and ``CrossEntropyLoss`` both call it.
"""

import decimal
import fractions
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

from .._array import check_upstream, compute_dtype, float_input, integer, sech2
from ..module import Module


# --- erf, erfc, written from their series and continued fraction -----------------------------
#
# NumPy has no vectorised erf (math.erf is scalar), so here is one, accurate to float64
# rounding. Three regions of |x|, each using the form that has no cancellation there:
#
#   |x| < 0.5        erf(x) = 2/sqrt(pi) * sum_n (-1)**n x**(2n+1) / (n! (2n+1))      (Maclaurin)
#                    x**2 <= 1/4, so the terms fall by at least 4n per step: 13 terms reach
#                    1e-17 relative, and the first term dominates (no cancellation).
#   0.5 <= |x| < 2   erf(a0 + h) = erf(a0) + sum_k erf^(k)(a0) h**k / k!   about the nearest
#                    anchor a0 = j/16 (Taylor), |h| <= 1/32. The derivatives are analytic:
#                    erf^(k)(a0) = 2/sqrt(pi) * (-1)**(k-1) * H_(k-1)(a0) * exp(-a0**2), H the
#                    Hermite polynomials (H_0 = 1, H_1 = 2t, H_(n+1) = 2t H_n - 2n H_(n-1)). The
#                    33 anchor values erf(a0) are computed once, at import, from the Maclaurin
#                    series in exact rational arithmetic (fractions.Fraction, summed to 1e-40)
#                    times 2/sqrt(pi) to 40 digits (decimal), rounded once to float64.
#                    The correction is below 0.05 of erf(a0), so its own rounding is damped and
#                    the result is as accurate as erf(a0) plus one addition. 14 terms: the k-th
#                    is below (1/32)**k * |H_(k-1)| / k!, under 1e-18 for k = 14.
#   |x| >= 2         erfc(x) = exp(-x**2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
#                    (Laplace's continued fraction), evaluated bottom-up from depth 64, which
#                    is converged to below 1e-16 for x >= 2 (its error at x = 2 and depth 60 is
#                    2e-16 and shrinks with x); then erf = 1 - erfc, exactly 1.0 beyond x ~ 6.
#
# exp(-x**2) is formed without rounding x**2: x is split into a 26-bit head and a tail
# (Veltkamp), the head's square is exact in float64, and the tail's part enters as exp of a
# tiny number. So in the tail erfc keeps its relative accuracy (a few ulp) far past x = 20,
# where rounding x**2 first would cost x**2 * 1e-16. erf is odd; erfc(-x) = 2 - erfc(x).
# Measured against math.erf on a dense grid of [-40, 40] (tests/test_losses_activations.py):
# max relative error 2 ulp of float64.

_TWO_OVER_SQRT_PI_40 = decimal.Decimal("1.128379167095512573896158903121545171688")  # 2/sqrt(pi)
_TWO_OVER_SQRT_PI = float(_TWO_OVER_SQRT_PI_40)
_MACLAURIN = [_TWO_OVER_SQRT_PI * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(14)]
_CF_DEPTH = 64
_ANCHORS_PER_UNIT = 16


def _erf_exact(t: fractions.Fraction | float) -> float:
    """erf(t) for a rational t in [0, 2], correctly rounded in practice: the Maclaurin series
    summed exactly in rationals until a term is below 1e-40, times 2/sqrt(pi) to 40 digits."""
    t = fractions.Fraction(t)
    total, n, term = fractions.Fraction(0), 0, t  # term = (-1)**n t**(2n+1) / n!
    while abs(term) > fractions.Fraction(1, 10 ** 40) or n == 0:
        total += term / (2 * n + 1)
        n += 1
        term = -term * t * t / n
    with decimal.localcontext() as ctx:
        ctx.prec = 45
        return float(decimal.Decimal(total.numerator) / decimal.Decimal(total.denominator) * _TWO_OVER_SQRT_PI_40)


def _taylor_table(terms: int = 14) -> np.ndarray:
    """(terms, 33): column j holds erf(a0) and erf^(k)(a0) / k! for k >= 1, at a0 = j / 16."""
    rows = []
    for j in range(2 * _ANCHORS_PER_UNIT + 1):
        t = j / _ANCHORS_PER_UNIT
        hermite = [1.0, 2.0 * t]  # H_0, H_1
        for n in range(1, terms):
            hermite.append(2.0 * t * hermite[n] - 2.0 * n * hermite[n - 1])
        scale = _TWO_OVER_SQRT_PI * math.exp(-t * t)
        rows.append([_erf_exact(fractions.Fraction(j, _ANCHORS_PER_UNIT))]
                    + [scale * (-1) ** (k - 1) * hermite[k - 1] / math.factorial(k) for k in range(1, terms)])
    return np.array(rows).T.copy()  # one contiguous row per power of h


_TAYLOR = _taylor_table()


def _exp_minus_square(x: np.ndarray) -> np.ndarray:
    """exp(-x**2) with x**2 not rounded: x = hi + lo, hi with 26 bits so hi*hi is exact."""
    c = x * 134217729.0  # 2**27 + 1: Veltkamp's split
    hi = c - (c - x)
    lo = x - hi
    return np.exp(-hi * hi) * np.exp(-lo * (2.0 * hi + lo))


def _erf_small(x: np.ndarray) -> np.ndarray:
    """erf for |x| < 0.5: the Maclaurin series in Horner form, x * P(x**2)."""
    s = x * x
    p = np.full_like(x, _MACLAURIN[-1])
    for c in reversed(_MACLAURIN[:-1]):
        p = p * s + c
    return x * p


def _erf_middle(a: np.ndarray) -> np.ndarray:
    """erf for 0.5 <= a < 2 (a >= 0): Taylor series about the nearest anchor a0 = j/16."""
    j = np.rint(a * _ANCHORS_PER_UNIT).astype(np.intp)  # (n,)
    h = a - j / _ANCHORS_PER_UNIT  # (n,), |h| <= 1/32, exact
    p = _TAYLOR[-1][j]  # (n,); row k of _TAYLOR: erf(a0) for k = 0, else erf^(k)(a0) / k!
    for row in _TAYLOR[-2::-1]:
        p = p * h + row[j]
    return p


def _erfc_large(a: np.ndarray) -> np.ndarray:
    """erfc for a >= 2: Laplace's continued fraction, evaluated from the bottom up."""
    t = a.copy()
    for k in range(_CF_DEPTH, 0, -1):
        t = a + (0.5 * k) / t
    return _exp_minus_square(a) / (math.sqrt(math.pi) * t)


def _erf_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(erf(|x|), erfc(|x|)) for float64 x, each computed in its accurate region; NaN stays NaN."""
    a = np.abs(x)
    erf_a = np.full_like(a, np.nan)
    small, middle, large = a < 0.5, (a >= 0.5) & (a < 2.0), a >= 2.0  # NaN is in none of them
    erf_a[small] = _erf_small(a[small])
    erf_a[middle] = _erf_middle(a[middle])
    erfc_a = np.subtract(1.0, erf_a, out=np.empty_like(a))  # below 2; from 2 on replaced just below
    erfc_large = _erfc_large(np.minimum(a[large], 40.0))  # erfc(40) = 0 in float64, as erfc(inf)
    erfc_a[large] = erfc_large
    erf_a[large] = 1.0 - erfc_large
    return erf_a, erfc_a


def erf(x: ArrayLike) -> np.ndarray:
    r"""The error function erf(x) = 2/sqrt(pi) * integral_0^x exp(-t**2) dt, element-wise, in float64.

    Vectorised and accurate to float64 rounding: the Maclaurin series below 0.5, Taylor
    series about tabulated points from 0.5 to 2 and Laplace's continued fraction for erfc
    beyond (the comment above ``_TWO_OVER_SQRT_PI`` derives each); measured against ``math.erf`` on
    a dense grid of [-40, 40], the largest relative error is 2 ulp. erf(+-inf) = +-1, NaN
    stays NaN. Returns a float64 array (a 0-d one for a scalar).
    """
    x = np.asarray(x, dtype=np.float64)
    erf_a, _ = _erf_parts(x)
    return np.copysign(erf_a, x)


def erfc(x: ArrayLike) -> np.ndarray:
    r"""The complementary error function erfc(x) = 1 - erf(x), element-wise, in float64.

    Computed directly (not as 1 - erf) where it is small, so it keeps its relative accuracy in
    the tail (erfc(10) = 2.1e-45, not 0). For x < 0, erfc(x) = 1 + erf(|x|), between 1 and 2.
    For 0.5 <= x < 2 it is 1 - erf(x): there erfc > 0.0046, so its relative error stays
    below about 5e-14.
    """
    x = np.asarray(x, dtype=np.float64)
    erf_a, erfc_a = _erf_parts(x)
    return np.where(x < 0, 1.0 + erf_a, erfc_a)


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """p = exp(x - max(x)) / sum(exp(x - max(x))) along ``axis``.

    Subtracting the row maximum changes nothing mathematically (it cancels between numerator
    and denominator) but keeps every exponent <= 0, so exp never overflows; a row of -inf
    entries except one (a causal mask) still gives finite probabilities. ``initial=-inf`` makes
    the maximum of an empty axis -inf instead of an error: an empty input gives an empty
    output, as in PyTorch.
    """
    z = np.exp(x - np.max(x, axis=axis, keepdims=True, initial=-np.inf))
    return z / np.sum(z, axis=axis, keepdims=True)


def softmax_backward(dp: np.ndarray, p: np.ndarray, axis: int = -1) -> np.ndarray:
    """dL/dx from dL/dp for p = softmax(x):  dx = p * (dp - sum(dp * p)) along ``axis``.

    The Jacobian is dp_i/dx_j = p_i (delta_ij - p_j); multiplying by dp gives the line above
    without ever forming the (n, n) Jacobian.
    """
    return p * (dp - np.sum(dp * p, axis=axis, keepdims=True))


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """logp = z - log(sum(exp(z))) with z = x - max(x), along ``axis``.

    Never forms softmax and then its log: at x = (-800, 1e4) softmax underflows to (0, 1) and
    log(0) = -inf, while z = (-10800, 0) and log(sum(exp(z))) = log(1) give the exact
    (-10800, 0). The largest z is 0, so the sum is in [1, n] and its log never overflows.
    """
    z = x - np.max(x, axis=axis, keepdims=True, initial=-np.inf)  # initial: an empty axis is no error
    with np.errstate(divide="ignore"):  # an empty axis sums to 0; its log(0) meets no element
        return z - np.log(np.sum(np.exp(z), axis=axis, keepdims=True))


def log_softmax_backward(dlogp: np.ndarray, logp: np.ndarray, axis: int = -1) -> np.ndarray:
    """dL/dx from dL/dlogp for logp = log_softmax(x):  dx = dlogp - softmax(x) * sum(dlogp).

    d logp_i / d x_j = delta_ij - p_j, with p = exp(logp) = softmax(x).
    """
    return dlogp - np.exp(logp) * np.sum(dlogp, axis=axis, keepdims=True)


def sigmoid_parts(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sigmoid(x), sigmoid'(x)) = (1 / (1 + exp(-x)), y * (1 - y)), from e = exp(-|x|)::

        e  = exp(-|x|)                                    in (0, 1]: exp never overflows
        y  = 1 / (1 + e)  where x >= 0,   e / (1 + e)  where x < 0
        dy/dx = e / (1 + e)**2                            = y * (1 - y) = sigmoid(x) sigmoid(-x)

    Each line only adds positive numbers, so nothing cancels: sigmoid(-40) = 4.2e-18 and its
    slope at +-40 come out to a few ulp. (0.5 * (1 + tanh(x / 2)) cancels for x < 0: 9e-9
    relative error at -20 and 0 below -37; y * (1 - y) gives a slope of 0 for x > 37.)
    """
    e = np.exp(-np.abs(x))
    y = np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return y, e / ((1.0 + e) * (1.0 + e))


class _Elementwise(Module):
    """Shared bookkeeping: check the input, compute in float32 for float16, cast back.

    A subclass writes ``_f(x) -> (y, saved)`` and ``_df(dy, saved) -> dx`` only. What it saves
    must stay private: a subclass whose ``saved`` holds x sets ``saves_input`` (``_f`` then
    gets a copy of the caller's array), one whose ``saved`` holds y sets ``saves_output`` (the
    caller gets a copy of y). A float16 input needs neither: its cast to float32 is a copy.

    The output has the input's dtype unless ``out_dtype`` says otherwise (Softmax's ``dtype=``):
    the input is then cast to that dtype first, and the gradient comes back through the same
    cast, in the input's dtype, as torch's autograd gives it.
    """

    saves_input = False
    saves_output = False

    def out_dtype(self, in_dtype: np.dtype) -> np.dtype:
        """The dtype the output has (and the input is cast to before anything is computed)."""
        return in_dtype

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        """(y, saved): the output and what ``_df`` needs."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _f")

    def _df(self, dy: np.ndarray, saved: Any) -> np.ndarray:
        """dx from dy and what ``_f`` saved."""
        raise NotImplementedError(f"{type(self).__name__} does not implement _df")

    def forward(self, x: ArrayLike) -> np.ndarray:
        x = float_input(x, type(self).__name__)
        out_dtype = self.out_dtype(x.dtype)
        x_out = x.astype(out_dtype, copy=False)  # the input as torch casts it (no copy by default)
        y, saved = self._f(x_out.astype(compute_dtype(out_dtype), copy=self.saves_input))
        self._cache = (saved, x.shape, x.dtype, out_dtype)
        return y.astype(out_dtype, copy=self.saves_output)

    def backward(self, dy: ArrayLike) -> np.ndarray:
        saved, shape, in_dtype, out_dtype = self._cached()
        dy = check_upstream(dy, shape, type(self).__name__)
        dx = self._df(dy.astype(compute_dtype(out_dtype), copy=False), saved)
        return dx.astype(out_dtype, copy=False).astype(in_dtype, copy=False)  # back through the cast


class ReLU(_Elementwise):
    r"""y = max(x, 0);  dx = dy where x > 0, and 0 where x <= 0 (at exactly 0 too, as in PyTorch).

    As in PyTorch, ReLU(inf) = inf, ReLU(-inf) = 0 and NaN propagates (its gradient passes dy
    through). ``x * (x > 0)`` would give NaN at -inf (-inf * 0), and ``dy * mask`` NaN where dy
    is inf and the unit is off; ``np.maximum`` and ``np.where`` pick values instead.

    Any shape. Cache: the mask x <= 0 of the units switched off.
    """

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        off = x <= 0
        return np.maximum(x, 0), off

    def _df(self, dy: np.ndarray, off: np.ndarray) -> np.ndarray:
        return np.where(off, 0, dy)


class GELU(_Elementwise):
    r"""GELU, exact by default (PyTorch's ``GELU()``), or its tanh approximation.

    ``approximate="none"`` (default), with Phi and phi the standard normal CDF and density::

        Phi = 0.5 * erfc(-x / sqrt(2))         = 0.5 * (1 + erf(x / sqrt(2)))
        y   = x * Phi
        dx  = dy * (Phi + x * phi),   phi = exp(-x**2 / 2) / sqrt(2 pi)

    Phi is taken from erfc, not 1 + erf, so far in the negative tail (x = -30) y keeps its
    tiny value instead of cancelling to 0.

    ``approximate="tanh"`` (PyTorch's ``GELU(approximate="tanh")``), k = sqrt(2 / pi),
    c = 0.044715::

        u  = k * (x + c * x**3),   t = tanh(u)
        y  = 0.5 * x * (1 + t)
        dx = dy * (0.5 * (1 + t) + 0.5 * x * (1 - t**2) * k * (1 + 3 * c * x**2))

    computed with 0.5 * (1 + t) = sigmoid(2 u) and 1 - t**2 = sech(u)**2 (``sigmoid_parts``,
    ``sech2``), which do not cancel where t is near -1 or +-1: y(-10) = -2e-37, not 0 (as
    PyTorch gives). Beyond |x| = 22, sech(u)**2 is exactly 0 in float64 (and float32), so the
    second term of dx is 0 there; x is clipped to +-30 in it, so that x**3 cannot overflow
    and give 0 * inf = NaN (x = 1e200 has dx = dy).

    The two differ by at most 4.8e-4 (4.73e-4 at x = +-2.70). Any shape. Cache: x (a copy) and
    Phi, or x, sigmoid(2 u) and u.
    """

    saves_input = True  # the cache holds x

    APPROXIMATIONS = ("none", "tanh")
    k = math.sqrt(2.0 / math.pi)
    c = 0.044715

    def __init__(self, approximate: str = "none") -> None:
        if not isinstance(approximate, str) or approximate not in self.APPROXIMATIONS:
            raise ValueError(f"GELU: approximate must be 'none' (the exact erf form) or 'tanh', "
                             f"got {approximate!r}")
        self.approximate = approximate

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        if self.approximate == "tanh":
            with np.errstate(over="ignore"):                   # x**3 beyond the range: u = +-inf is right
                u = self.k * (x + self.c * x * x * x)
            half_1_plus_t, _ = sigmoid_parts(2.0 * u)          # 0.5 * (1 + tanh(u))
            return x * half_1_plus_t, (x, half_1_plus_t, u)
        Phi = (0.5 * erfc(-x * _SQRT_HALF)).astype(x.dtype, copy=False)  # erfc works in float64
        return x * Phi, (x, Phi)

    def _df(self, dy: np.ndarray, saved: tuple[np.ndarray, ...]) -> np.ndarray:
        if self.approximate == "tanh":
            x, half_1_plus_t, u = saved
            xs = np.clip(x, -30.0, 30.0)                       # sech(u)**2 = 0 beyond |x| = 22: no inf * 0
            return dy * (half_1_plus_t + 0.5 * xs * sech2(u) * self.k * (1.0 + 3.0 * self.c * xs * xs))
        x, Phi = saved
        phi = np.exp(-0.5 * x * x) * _INV_SQRT_2PI
        return dy * (Phi + x * phi)


_SQRT_HALF = math.sqrt(0.5)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def gelu_tanh() -> GELU:
    """GELU in its tanh approximation: the activation name "gelu_tanh"."""
    return GELU(approximate="tanh")


class Sigmoid(_Elementwise):
    r"""y = 1 / (1 + exp(-x)), dx = dy * y * (1 - y), computed without overflow or
    cancellation from e = exp(-|x|) (see ``sigmoid_parts``)::

        y  = 1 / (1 + e)  where x >= 0,   e / (1 + e)  where x < 0
        dx = dy * e / (1 + e)**2

    Any shape. Cache: dy/dx = e / (1 + e)**2.
    """

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        y, slope = sigmoid_parts(x)
        return y, slope

    def _df(self, dy: np.ndarray, slope: np.ndarray) -> np.ndarray:
        return dy * slope


class Tanh(_Elementwise):
    r"""y = tanh(x);  dx = dy * (1 - y**2), the slope computed as sech(x)**2 (see ``sech2``)::

        e  = exp(-2|x|),   1 - y**2 = 4 e / (1 + e)**2

    Any shape. Cache: the slope 1 - y**2.
    """

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        return np.tanh(x), sech2(x)

    def _df(self, dy: np.ndarray, slope: np.ndarray) -> np.ndarray:
        return dy * slope


class _AlongAxis(_Elementwise):
    """What Softmax and LogSoftmax share: the ``axis`` they normalise along, checked against the
    input, the ``dtype`` they compute in, and a cache holding the output (so the caller gets a
    copy).

    ``dtype`` (None, or a floating dtype) is ``torch.nn.functional.softmax``'s and
    ``log_softmax``'s ``dtype=`` (torch's modules ``nn.Softmax`` and ``nn.LogSoftmax`` have
    none): the input is cast to ``dtype`` before anything is computed, so the output has that
    dtype, and the gradient comes back in the input's dtype. ``dtype=np.float64`` on a float32
    input computes the softmax in float64; None keeps the input's dtype.
    """

    saves_output = True

    def __init__(self, axis: int = -1, dtype: DTypeLike | None = None) -> None:
        who = type(self).__name__
        self.axis = integer(axis, "axis", who)
        if dtype is not None:
            try:
                dtype = np.dtype(dtype)
            except TypeError:
                raise TypeError(f"{who}: dtype must be None or a floating-point NumPy dtype, got {dtype!r}") from None
            if dtype not in (np.float16, np.float32, np.float64):
                raise TypeError(f"{who}: dtype must be None or a floating-point dtype (float16, float32, float64), "
                                f"got {dtype}")
        self.dtype = dtype

    def extra_repr(self) -> str:
        return f"axis={self.axis}" + ("" if self.dtype is None else f", dtype={self.dtype}")

    def out_dtype(self, in_dtype: np.dtype) -> np.dtype:
        return in_dtype if self.dtype is None else self.dtype

    def _check_axis(self, x: np.ndarray) -> None:
        if not -x.ndim <= self.axis < x.ndim:
            raise ValueError(f"{type(self).__name__}(axis={self.axis}) needs an input with that axis, "
                             f"got shape {x.shape}")


class Softmax(_AlongAxis):
    r"""Numerically stable softmax along ``axis`` (default the last).

    Forward and backward (sums along ``axis``)::

        y  = exp(x - max(x)) / sum(exp(x - max(x)))
        dx = y * (dy - sum(dy * y))

    Any shape. ``dtype``: compute in that dtype, as ``torch.softmax(x, dim, dtype=...)`` (see
    ``_AlongAxis``). Cache: y.
    """

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        self._check_axis(x)
        y = softmax(x, self.axis)
        return y, y

    def _df(self, dy: np.ndarray, y: np.ndarray) -> np.ndarray:
        return softmax_backward(dy, y, self.axis)


class LogSoftmax(_AlongAxis):
    r"""Numerically stable log-softmax along ``axis`` (default the last).

    Forward and backward (sums along ``axis``), see ``log_softmax``::

        z    = x - max(x)
        logp = z - log(sum(exp(z)))
        dx   = dy - softmax(x) * sum(dy),   softmax(x) = exp(logp)

    Exact where log(softmax(x)) gives -inf (x = (-800, 1e4) gives (-10800, 0)). Any shape.
    ``dtype``: compute in that dtype, as ``torch.log_softmax(x, dim, dtype=...)`` (see
    ``_AlongAxis``). Cache: logp.
    """

    def _f(self, x: np.ndarray) -> tuple[np.ndarray, Any]:
        self._check_axis(x)
        logp = log_softmax(x, self.axis)
        return logp, logp

    def _df(self, dy: np.ndarray, logp: np.ndarray) -> np.ndarray:
        return log_softmax_backward(dy, logp, self.axis)


ACTIVATIONS: dict[str, Callable[[], Module]] = {"relu": ReLU, "gelu": GELU, "gelu_tanh": gelu_tanh,
                                                "sigmoid": Sigmoid, "tanh": Tanh}
"""Activation names for FeedForward: "gelu" is the exact GELU (PyTorch's default), "gelu_tanh" its
tanh approximation."""
