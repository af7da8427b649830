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


def sum_to_shape(g, shape):
    """Sum ``g`` over the axes along which an array of ``shape`` was broadcast to ``g.shape``.

    This is the backward of broadcasting: a parameter of shape (C,) used at every position of
    an (N, C) input receives the sum of the N gradients.
    """
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1
    )
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def make_rng(rng):
    """Turn ``None``, an int seed or a ``np.random.Generator`` into a ``np.random.Generator``."""
    if rng is None or isinstance(rng, (int, np.integer)):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    raise TypeError(f"rng must be None, an int seed or a numpy.random.Generator, got {type(rng).__name__}")
