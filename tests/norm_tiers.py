"""What the norms' differential and robustness suites share: the tiers they run on, and inputs.

``TIERS`` lists the namespaces whose norm layers must pass the same tests: the reference tier
(``normcore``) and, once it exists, the fast tier (``normcore.fast``). Every test of
``test_differential_torch.py``, ``test_robustness_norms.py`` and ``test_norm_regressions.py``
is parametrized over it, so a new tier is tested by appearing here.
"""

import importlib
import importlib.util

import numpy as np

import normcore
from normcore.module import Module, Parameter


def _tiers():
    tiers = [normcore]
    if importlib.util.find_spec("normcore.fast") is not None:
        tiers.append(importlib.import_module("normcore.fast"))
    return tiers


TIERS = _tiers()
TIER_IDS = [tier.__name__ for tier in TIERS]

NORMS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d")

# How an input may sit in memory (see ``in_layout``).
LAYOUTS = ("C", "F", "transposed", "stepped", "reversed", "broadcast", "readonly")


def in_layout(a, layout, rng, free_axes=()):
    """An array of ``a``'s shape and (but for ``broadcast``) values, laid out as ``layout`` says:

    C, F             a contiguous copy in that order
    transposed       a transposed view of a contiguous array (a random axis permutation)
    stepped          every other element of a larger array (strides of 2 elements or more)
    reversed         a view with negative strides on a random set of axes
    broadcast        one of ``free_axes`` (axes the layer does not normalise over) broadcast
                     from size 1 (stride 0), so the values along it repeat; ``readonly``
                     when there is no free axis
    readonly         a contiguous copy that cannot be written to
    """
    a = np.asarray(a)
    if layout == "broadcast" and not free_axes:
        layout = "readonly"
    if layout == "C":
        return np.array(a, order="C")
    if layout == "F":
        return np.array(a, order="F")
    if layout == "transposed":
        perm = rng.permutation(a.ndim)
        return np.ascontiguousarray(a.transpose(perm)).transpose(np.argsort(perm))
    if layout == "stepped":
        steps = tuple(int(s) for s in rng.integers(1, 4, a.ndim))
        big = np.zeros(tuple(n * s for n, s in zip(a.shape, steps)), a.dtype)
        view = big[tuple(slice(None, None, s) for s in steps)]
        view[...] = a
        return view
    if layout == "reversed":
        flip = tuple(slice(None, None, -1) if rng.random() < 0.6 else slice(None) for _ in range(a.ndim))
        return a[flip].copy()[flip]
    if layout == "broadcast":
        axis = int(rng.choice(free_axes))
        one = np.take(a, [0], axis=axis) if a.shape[axis] else np.take(a, [], axis=axis)
        return np.broadcast_to(one, a.shape)
    if layout == "readonly":
        b = a.copy()
        b.flags.writeable = False
        return b
    raise ValueError(f"unknown layout {layout!r}")


def arrays_in(obj, _seen=None):
    """Every NumPy array reachable from ``obj``: a module's attributes (its cache, parameters
    and buffers, whatever it keeps), a Parameter's data and grad, tuples, lists and dicts."""
    seen = set() if _seen is None else _seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, Parameter):
        return [obj.data, obj.grad]
    if isinstance(obj, Module):
        obj = vars(obj)
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        return [a for item in obj for a in arrays_in(item, seen)]
    return []
