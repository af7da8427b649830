"""Run the experiments with a single BLAS thread.

The experiments multiply many small matrices (e.g. 60 x 100 by 100 x 100). A multi-threaded
OpenBLAS spends longer waking its threads than computing them, and on a busy machine a step can
take thirty times longer than on one thread. ``single_thread()`` sets OpenBLAS's thread count to
one for the duration of a ``with`` block (through its C API, since the environment variable only
counts before NumPy is imported) and restores it afterwards; without OpenBLAS it does nothing.
"""

import contextlib
import ctypes

# (setter, getter) pairs, as OpenBLAS builds name them (plain, 64-bit-integer, NumPy's wheels).
_SYMBOLS = [
    ("openblas_set_num_threads", "openblas_get_num_threads"),
    ("openblas_set_num_threads64_", "openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
    ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
]


def _openblas():
    """(set_num_threads, get_num_threads) of the OpenBLAS NumPy loaded, or None."""
    try:
        with open("/proc/self/maps") as f:
            paths = {line.split()[-1] for line in f if "openblas" in line.lower()}
    except OSError:
        return None
    for path in sorted(paths):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for setter, getter in _SYMBOLS:
            if hasattr(lib, setter) and hasattr(lib, getter):
                return getattr(lib, setter), getattr(lib, getter)
    return None


@contextlib.contextmanager
def single_thread():
    """Within the block, BLAS runs on one thread; the previous count is restored afterwards."""
    import numpy  # noqa: F401  (OpenBLAS is loaded with NumPy)

    api = _openblas()
    if api is None:
        yield
        return
    set_threads, get_threads = api
    before = get_threads()
    set_threads(1)
    try:
        yield
    finally:
        set_threads(before)
