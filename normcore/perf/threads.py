"""How many threads NumPy's BLAS runs on: the one switch the benchmark and the experiments share.

normcore multiplies many small matrices (e.g. 60 x 100 by 100 x 100). A multi-threaded OpenBLAS
spends longer waking its threads than computing them, and on a busy machine a step can take
thirty times longer than on one thread; the benchmark also compares NumPy with PyTorch thread
count for thread count. ``blas_threads(n)`` sets OpenBLAS's thread count to n for the duration
of a ``with`` block (through its C API, since the environment variable only counts before NumPy
is imported) and restores it afterwards; ``single_thread()`` is ``blas_threads(1)``, also usable
as a decorator. Without OpenBLAS (or off Linux) both do nothing.
"""

import contextlib
import ctypes

import numpy  # noqa: F401  (loads the OpenBLAS that is looked for below)

# (set, get) symbol names as OpenBLAS builds name them: NumPy's wheels ("scipy_openblas", with
# 64-bit integers "...64_"), and a system OpenBLAS (plain, or "64_").
_SYMBOLS = [(f"{prefix}_set_num_threads{suffix}", f"{prefix}_get_num_threads{suffix}")
            for prefix in ("scipy_openblas", "openblas") for suffix in ("64_", "")]
_FOUND = {}  # path of a loaded OpenBLAS -> its (set_num_threads, get_num_threads), or None


def openblas():
    """[(set_num_threads, get_num_threads)] of every OpenBLAS loaded in this process (usually one)."""
    try:
        with open("/proc/self/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "openblas" in line.lower() and ".so" in line})
    except OSError:
        return []
    for path in paths:
        if path not in _FOUND:
            _FOUND[path] = _api(path)
    return [_FOUND[path] for path in paths if _FOUND[path] is not None]


def _api(path):
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    for setter, getter in _SYMBOLS:
        if hasattr(lib, setter) and hasattr(lib, getter):
            return getattr(lib, setter), getattr(lib, getter)
    return None


@contextlib.contextmanager
def blas_threads(n):
    """Within the block, OpenBLAS runs on ``n`` threads; the previous counts are restored afterwards."""
    saved = []
    try:
        for set_threads, get_threads in openblas():
            saved.append((set_threads, get_threads()))
            set_threads(n)
        yield
    finally:
        for set_threads, before in saved:
            set_threads(before)


def single_thread():
    """``blas_threads(1)``: a context manager, or a decorator (``@single_thread()``)."""
    return blas_threads(1)
