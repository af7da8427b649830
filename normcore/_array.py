"""Input checks and small array helpers shared by every layer.

Each check raises an exception whose message says what was expected, so that a wrong shape or
dtype never turns into a silent wrong answer or a NumPy broadcasting traceback.
"""

import numpy as np

import numbers

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


def as_array(x, who, what="input"):
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


def is_instrument(x):
    """True for an ndarray subclass that asks to pass through the layers' input checks
    unchanged, by ``instrument = True`` on its class: a tool that watches the arithmetic, such
    as the speed experiment's pass counter, which counts every NumPy operation made on it and
    on the arrays computed from it. Every other subclass (np.matrix, masked arrays, memmaps)
    becomes a plain ndarray, so that its own semantics never change a layer's formulas."""
    return isinstance(x, np.ndarray) and getattr(type(x), "instrument", False) is True


def positive_int(value, name, who):
    """``value`` as an int >= 1; ``TypeError`` for anything that is not an integer (2.5, "8",
    True), ``ValueError`` for an integer below 1. Sizes are never silently truncated."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: {name} must be an int, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{who}: {name} must be a positive int, got {value}")
    return int(value)


def real_number(value, name, who, low=None, high=None, allow_none=False):
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
        span = {(True, True): f"in [{low:g}, {high:g}]", (True, False): f">= {low:g}",
                (False, True): f"<= {high:g}", (False, False): "finite"}[(low is not None, high is not None)]
        raise ValueError(f"{who}: {name} must be {span}, got {value}")
    return value


def float_input(x, who):
    """Return ``x`` as a floating-point NumPy array, or raise ``TypeError`` saying what is accepted."""
    x = as_array(x, who)
    if x.dtype.type not in FLOAT_DTYPES:
        raise TypeError(
            f"{who} expects a floating-point input (float16, float32 or float64), "
            f"got dtype {x.dtype}"
        )
    return x


def compute_dtype(dtype):
    """The dtype a layer computes in: float16 is computed in float32, other floats as they are."""
    return np.dtype(np.float32) if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def check_upstream(dy, expected_shape, who):
    """Return the upstream gradient ``dy`` as an array, or raise if its shape differs from the output's."""
    dy = dy if is_instrument(dy) else np.asarray(dy)
    if dy.shape != tuple(expected_shape):
        raise ValueError(
            f"{who}.backward expects an upstream gradient of the output's shape "
            f"{tuple(expected_shape)}, got {dy.shape}"
        )
    if not np.issubdtype(dy.dtype, np.floating):
        raise TypeError(f"{who}.backward expects a floating-point upstream gradient, got dtype {dy.dtype}")
    return dy


def sum_to_shape(g, shape, times=None):
    """Sum ``g`` (or ``g * times``) over the axes along which an array of ``shape`` was broadcast
    to ``g.shape``.

    This is the backward of broadcasting: a parameter of shape (C,) used at every position of
    an (N, C) input receives the sum of the N gradients. ``times`` gives the sum of a product,
    e.g. ``sum_to_shape(dy, gamma_shape, times=x_hat)`` for dgamma, without forming it.
    """
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if not axes:
        return (g if times is None else g * times).reshape(shape)
    return sum_over(g, axes, times).reshape(shape)


def sum_over(a, axes, times=None):
    """``np.sum(a * times, axes, keepdims=True)`` (or of ``a`` alone), fast and accurate.

    The product is never formed: ``np.vecdot`` (a dot product per row, for sums over the trailing
    axes; a plain sum is the dot product with ones, faster than ``np.sum`` there and as
    accurate) or ``np.einsum`` multiply and add in one pass.

    A sum over the batch (axis 0, as for dgamma or BatchNorm's mean) would otherwise add the
    rows one after the other, with a float32 rounding error growing like the number of rows n.
    The rows are summed in q blocks of b ~ sqrt(n) rows instead (one NumPy call over a
    (q, b, ...) view), and the q block sums are added in float64: the error grows like sqrt(n).
    The result has ``a``'s dtype and keeps the reduced axes as size 1.
    """
    axes = tuple(sorted(ax % a.ndim for ax in ((axes,) if isinstance(axes, (int, np.integer)) else axes)))
    operands = (a,) if times is None else (a, times)
    if 0 not in axes:
        lead = a.ndim - len(axes)
        if axes == tuple(range(lead, a.ndim)):  # trailing axes: a dot product per row
            rows = a.shape[:lead]
            a = a.reshape(rows + (-1,))  # (*rows, n)
            times = np.ones(a.shape[-1], a.dtype) if times is None else times.reshape(a.shape)
            return np.vecdot(a, times).reshape(rows + (1,) * len(axes))
        return _einsum_sum(operands, axes)
    lead = next(i for i in range(a.ndim + 1) if i not in axes)  # axes 0..lead-1 merge into one
    kept_shape = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    flat = [op.reshape((-1,) + a.shape[lead:]) for op in operands]  # (n, *rest)
    rest_axes = tuple(ax - lead + 2 for ax in axes if ax >= lead)  # their place in (q, b, *rest)
    n = flat[0].shape[0]
    b = max(1, int(np.sqrt(n)))
    q = n // b
    blocks = [op[:q * b].reshape((q, b) + op.shape[1:]) for op in flat]  # (q, b, *rest)
    total = _einsum_sum(blocks, (1,) + rest_axes).astype(np.float64).sum(axis=0)
    if q * b < n:
        total += _einsum_sum([op[q * b:] for op in flat], (0,) + tuple(x - 1 for x in rest_axes))
    return total.astype(a.dtype).reshape(kept_shape)


def _einsum_sum(operands, axes):
    """The sum over ``axes`` (kept as size 1) of the product of ``operands``, all of one shape."""
    ndim = operands[0].ndim
    letters = "abcdefghijklmnopqrstuvwxyz"[:ndim]
    kept = "".join(c for i, c in enumerate(letters) if i not in axes)
    spec = ",".join([letters] * len(operands)) + "->" + kept
    shape = tuple(1 if i in axes else n for i, n in enumerate(operands[0].shape))
    return np.einsum(spec, *operands).reshape(shape)


def make_rng(rng):
    """Turn ``None``, an int seed or a ``np.random.Generator`` into a ``np.random.Generator``."""
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")
