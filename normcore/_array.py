"""Input checks and small array helpers shared by every layer.

Each check raises an exception whose message says what was expected, so that a wrong shape or
dtype never turns into a silent wrong answer or a NumPy broadcasting traceback.
"""

import numpy as np

FLOAT_DTYPES = (np.float16, np.float32, np.float64)


def float_input(x, who):
    """Return ``x`` as a floating-point NumPy array, or raise ``TypeError`` saying what is accepted."""
    x = np.asarray(x)
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
    dy = np.asarray(dy)
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


# Rows per block when a sum runs over axis 0: each block is summed in the input's dtype, the
# block sums are added in float64, so float32 rounding grows with the block, not the batch.
_SUM_BLOCK_ELEMENTS = 2 ** 15


def sum_over(a, axes, times=None):
    """``np.sum(a * times, axes, keepdims=True)`` (or of ``a`` alone), fast and accurate.

    The product is never formed: ``np.vecdot`` (a dot product per row, for sums over the trailing
    axes) or ``np.einsum`` multiply and add in one pass. A sum over the trailing axes of ``a``
    alone is NumPy's fast, pairwise, contiguous reduction. A sum over axis 0 (over the batch, as for
    dgamma or BatchNorm's mean) would add the rows one after the other, with a rounding error
    growing with the batch size; it is taken over blocks of rows instead, the block sums added
    in float64. The result has ``a``'s dtype and keeps the reduced axes as size 1.
    """
    axes = tuple(sorted(ax % a.ndim for ax in np.atleast_1d(axes)))
    operands = (a,) if times is None else (a, times)
    if 0 not in axes:
        if times is None:
            return a.sum(axis=axes, keepdims=True)
        if axes == tuple(range(a.ndim - len(axes), a.ndim)):  # trailing axes: a dot product per row
            rows = a.shape[:a.ndim - len(axes)]
            dot = np.vecdot(a.reshape(rows + (-1,)), times.reshape(rows + (-1,)))
            return dot.reshape(rows + (1,) * len(axes))
        return _einsum_sum(operands, axes)
    rows = max(1, _SUM_BLOCK_ELEMENTS // max(1, a[0].size))
    total = 0.0
    for start in range(0, a.shape[0], rows):
        total = total + _einsum_sum([op[start:start + rows] for op in operands], axes).astype(np.float64)
    return np.asarray(total, dtype=a.dtype)


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
