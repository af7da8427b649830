"""Input checks and small array helpers shared by every layer.

Each check raises an exception whose message says what was expected, so that a wrong shape or
dtype never turns into a silent wrong answer or a NumPy broadcasting traceback.
"""

import numbers
from collections.abc import Iterable
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike, DTypeLike

FLOAT_DTYPES = (np.float16, np.float32, np.float64)

RngLike = int | np.random.Generator | None
"""What an ``rng`` argument takes: None (fresh entropy), an int seed, or a Generator."""
ShapeLike = int | tuple[int, ...] | list[int]
"""What a ``normalized_shape`` argument takes: an int n, or a tuple or list of ints."""


def as_array(x: Any, who: str, what: str = "input") -> np.ndarray:
    """``np.asarray(x)``, or a ``TypeError`` naming ``who`` when x is no rectangular array
    (a ragged list, a string, None, ...). An instrument (``is_instrument``) passes unchanged."""
    try:
        a = x if is_instrument(x) else np.asarray(x)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"{who} expects its {what} as an array of numbers, got {type(x).__name__} "
                        f"that NumPy cannot make into one ({exc})") from None
    if a.dtype == object or a.dtype.kind in "USV":
        raise TypeError(f"{who} expects its {what} as an array of numbers, got {type(x).__name__} "
                        f"of dtype {a.dtype}")
    return a


def integer(value: object, name: str, who: str) -> int:
    """``value`` as an int (an axis, an index: any sign); ``TypeError`` for anything that is not
    an integer (2.5, "8", True), which is never silently truncated."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {value!r} ({type(value).__name__})")
    return int(value)


def is_instrument(x: object) -> bool:
    """True for an ndarray subclass that asks to pass through the layers' input checks
    unchanged, by ``instrument = True`` on its class: a tool that watches the arithmetic, such
    as the speed experiment's pass counter, which counts every NumPy operation made on it and
    on the arrays computed from it. Every other subclass (np.matrix, masked arrays, memmaps)
    becomes a plain ndarray, so that its own semantics never change a layer's formulas."""
    return isinstance(x, np.ndarray) and getattr(type(x), "instrument", False) is True


def flag(value: object, name: str, who: str) -> bool:
    """``value`` as a bool; a TypeError for anything else (a string "False" is truthy)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{who}: {name} must be True or False, got {value!r}")
    return bool(value)


def positive_int(value: object, name: str, who: str) -> int:
    """``value`` as an int >= 1; ``TypeError`` for anything that is not an integer (2.5, "8",
    True), ``ValueError`` for an integer below 1. Sizes are never silently truncated."""
    value = integer(value, name, who)
    if value < 1:
        raise ValueError(f"{who}: {name} must be a positive int, got {value}")
    return value


@overload
def real_number(value: object, name: str, who: str, low: float | None = None, high: float | None = None,
                allow_none: Literal[False] = False) -> float: ...
@overload
def real_number(value: object, name: str, who: str, low: float | None = None, high: float | None = None,
                allow_none: bool = False) -> float | None: ...
def real_number(value: object, name: str, who: str, low: float | None = None, high: float | None = None,
                allow_none: bool = False) -> float | None:
    """``value`` as a finite float in [low, high] (either bound may be None); ``None`` passes
    through when ``allow_none``. ``TypeError`` for a non-number ("0.1", None, True),
    ``ValueError`` for a number out of range."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        expected = "a number" + (" or None" if allow_none else "")
        raise TypeError(f"{who}: {name} must be {expected}, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not np.isfinite(value) or (low is not None and value < low) or (high is not None and value > high):
        if low is not None and high is not None:
            span = f"in [{low:g}, {high:g}]"
        elif low is not None or high is not None:
            span = f">= {low:g}" if low is not None else f"<= {high:g}"
        else:
            span = "finite"
        raise ValueError(f"{who}: {name} must be {span}, got {value}")
    return value


def float_input(x: ArrayLike, who: str, what: str = "input") -> np.ndarray:
    """Return ``x`` as a floating-point NumPy array, or raise ``TypeError`` saying what is accepted
    (``what`` names the argument in the message)."""
    x = as_array(x, who, what)
    if x.dtype.type not in FLOAT_DTYPES:
        raise TypeError(
            f"{who} expects a floating-point {what} (float16, float32 or float64), "
            f"got dtype {x.dtype}"
        )
    return x


def compute_dtype(dtype: DTypeLike) -> np.dtype:
    """The dtype a layer computes in: float16 is computed in float32, other floats as they are."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def check_upstream(dy: ArrayLike, expected_shape: Iterable[int], who: str) -> np.ndarray:
    """Return the upstream gradient ``dy`` as an array, or raise if its shape differs from the output's."""
    dy = as_array(dy, f"{who}.backward", "upstream gradient")
    if dy.shape != tuple(expected_shape):
        raise ValueError(
            f"{who}.backward expects an upstream gradient of the output's shape "
            f"{tuple(expected_shape)}, got {dy.shape}"
        )
    if not np.issubdtype(dy.dtype, np.floating):
        raise TypeError(f"{who}.backward expects a floating-point upstream gradient, got dtype {dy.dtype}")
    return dy


def sech2(x: np.ndarray) -> np.ndarray:
    """1 - tanh(x)**2 = 4 e / (1 + e)**2 with e = exp(-2|x|): no cancellation where tanh(x) is
    near +-1 (1 - y**2 loses 1e-8 of its value at |x| = 10 and is 0 beyond 19, where sech**2 is
    4e-17), and no overflow (cosh(x) would overflow beyond 710). The slope of ``Tanh`` and of
    ``DyT``, written once here."""
    e = np.exp(-2.0 * np.abs(x))
    return 4.0 * e / ((1.0 + e) * (1.0 + e))


def sum_to_shape(g: np.ndarray, shape: Iterable[int]) -> np.ndarray:
    """Sum ``g`` over the axes along which an array of ``shape`` was broadcast to ``g.shape``.

    This is the backward of broadcasting: a parameter of shape (C,) used at every position of
    an (N, C) input receives the sum of the N gradients.
    """
    shape = tuple(shape)
    lead = g.ndim - len(shape)                                   # axes broadcasting added in front
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=tuple(range(lead)) + stretched).reshape(shape)


def largest_finite(x: ArrayLike) -> float:
    """The largest finite |value| of ``x`` (0 when it has none): the scale a gradient that is 0 in
    theory is judged at. Its computed value is rounding noise, a 1e-17 whose error relative to
    itself means nothing; set against the largest gradient of the same backward pass, it is tiny.
    The practice grader (``normcore.practice.probes``) and ``torch_bridge.compare`` both use it."""
    a = np.abs(np.asarray(x, dtype=np.float64))
    return float(a[np.isfinite(a)].max(initial=0.0))


def make_rng(rng: RngLike) -> np.random.Generator:
    """Turn ``None``, an int seed or a ``np.random.Generator`` into a ``np.random.Generator``."""
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")
