"""What the norms' differential and robustness suites share: the tiers they run on, and inputs.

``TIERS`` lists the namespaces whose norm layers must pass the same tests: the reference tier
(``normcore``) and, once it exists, the fast tier (``normcore.fast``). Every test of
``test_differential_torch.py``, ``test_robustness_norms.py`` and ``test_norm_regressions.py``
is parametrized over it, so a new tier is tested by appearing here.
"""

import importlib
import importlib.util
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import normcore
from normcore.module import Module, Parameter


def _tiers():
    tiers = [normcore]
    spec = importlib.util.find_spec("normcore.fast")
    # Only this checkout's fast tier: an editable install of another checkout can make
    # normcore.fast importable from there.
    if spec is not None and Path(spec.origin).resolve().is_relative_to(Path(normcore.__file__).resolve().parent):
        tiers.append(importlib.import_module("normcore.fast"))
    return tiers


TIERS = _tiers()
TIER_IDS = [tier.__name__ for tier in TIERS]

NORMS = ("LayerNorm", "RMSNorm", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "GroupNorm", "InstanceNorm1d",
         "InstanceNorm2d", "InstanceNorm3d")
SPATIAL_DIMS = {"InstanceNorm1d": 1, "InstanceNorm2d": 2, "InstanceNorm3d": 3}  # an InstanceNorm's spatial axes

def suite_settings(max_examples):
    """Hypothesis bounded and reproducible: the same examples on every run, nothing saved."""
    return settings(max_examples=max_examples, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --- the cases hypothesis draws --------------------------------------------------------------

size = st.integers  # st.integers(lo, hi): an axis length
EPS = st.sampled_from([1e-5, 1e-3, 0.1])
MOMENTUM = st.sampled_from([None, 0.1, 0.5, 0.0, 1.0])
EMPTY = st.sampled_from([False, False, False, True])  # about one case in four has a zero-size axis


@st.composite
def configs(draw, name):
    """(constructor args, kwargs, input shape, the axes the layer does not normalise over).

    Axes have lengths 1 to 4; in about one case in four one of them (one PyTorch accepts at
    zero) is empty instead."""
    if name in ("LayerNorm", "RMSNorm", "DyT"):
        ns = tuple(draw(st.lists(size(1, 4), min_size=1, max_size=3)))
        lead = tuple(draw(st.lists(size(1, 3), max_size=2)))
        arg = draw(st.sampled_from([ns[0], ns, list(ns)] if len(ns) == 1 else [ns, list(ns)]))
        kwargs = {"elementwise_affine": draw(st.booleans())}
        if name == "LayerNorm":
            kwargs.update(eps=draw(EPS), bias=draw(st.booleans()))
        elif name == "DyT":
            kwargs.update(alpha_init=draw(st.sampled_from([0.5, -1.0, 2.0])), bias=draw(st.booleans()))
        else:
            kwargs.update(eps=draw(st.sampled_from([None, 1e-6, 1e-3])))
        shape, free, may_be_empty = lead + ns, tuple(range(len(lead))), range(len(lead))
    elif name == "GroupNorm":
        g, k = draw(size(1, 3)), draw(size(1, 3))
        spatial = tuple(draw(st.lists(size(1, 3), max_size=2)))
        args, kwargs = (g, g * k), {"eps": draw(EPS), "affine": draw(st.booleans()), "bias": draw(st.booleans())}
        shape, free = (draw(size(1, 3)), g * k) + spatial, (0,)
        may_be_empty = [0] + list(range(2, len(shape)))
    else:
        c = draw(size(1, 4))
        kwargs = {"eps": draw(st.sampled_from([1e-5, 1e-3])), "momentum": draw(MOMENTUM),
                  "affine": draw(st.booleans()), "bias": draw(st.booleans()),
                  "track_running_stats": draw(st.booleans())}
        if name == "BatchNorm1d":
            shape, free = (draw(size(1, 4)), c) + draw(st.sampled_from([(), (draw(size(1, 4)),)])), (1,)
            may_be_empty = [0] + list(range(2, len(shape)))
        elif name == "BatchNorm2d":
            shape, free = (draw(size(1, 3)), c, draw(size(1, 3)), draw(size(1, 3))), (1,)
            may_be_empty = [0, 2, 3]
        elif name == "BatchNorm3d":
            shape, free = (draw(size(1, 3)), c) + tuple(draw(size(1, 3)) for _ in range(3)), (1,)
            may_be_empty = [0, 2, 3, 4]
        else:  # InstanceNorm: PyTorch fails on an empty batch (N = 0), so only spatial axes
            spatial = tuple(draw(size(1, 4)) for _ in range(SPATIAL_DIMS[name]))
            if draw(st.booleans()):  # unbatched (C, *S)
                shape, free = (c,) + spatial, (0,)
            else:
                shape, free = (draw(size(1, 3)), c) + spatial, (0, 1)
            may_be_empty = range(len(shape) - len(spatial), len(shape))
    if name in ("LayerNorm", "RMSNorm", "DyT"):
        args = (arg,)
    elif name != "GroupNorm":
        args = (c,)
    if may_be_empty and draw(EMPTY):
        axis = draw(st.sampled_from(list(may_be_empty)))
        shape = shape[:axis] + (0,) + shape[axis + 1:]
    return args, kwargs, shape, free


def randomized(layer, rng):
    """``layer`` with a random state, loaded through load_state_dict: gamma near 1, beta,
    running_mean, running_var > 0 and num_batches_tracked."""
    state = {}
    for key, value in layer.state_dict().items():
        if key == "num_batches_tracked":
            state[key] = np.array(rng.integers(0, 6), dtype=value.dtype)
        elif key == "running_var":
            state[key] = rng.uniform(0.5, 2.0, value.shape).astype(value.dtype)
        else:
            state[key] = (rng.standard_normal(value.shape) + (key == "weight")).astype(value.dtype)
    layer.load_state_dict(state)
    return layer


def channel_axis(name, shape):
    """The axis whose length the layer fixes: the channels, or the last normalised axis."""
    if name in ("LayerNorm", "RMSNorm", "DyT"):
        return len(shape) - 1
    unbatched = name.startswith("InstanceNorm") and len(shape) == SPATIAL_DIMS[name] + 1
    return 0 if unbatched else 1


def wrong_shape(name, shape):
    """``shape`` with one channel (or normalised position) too many."""
    axis = channel_axis(name, shape)
    return shape[:axis] + (shape[axis] + 1,) + shape[axis + 1:]


# --- inputs and what a layer holds ------------------------------------------------------------

# How an input may sit in memory (see ``in_layout``).
LAYOUTS = ("C", "F", "transposed", "stepped", "reversed", "broadcast", "readonly")


def with_layout(a, layout):
    """``a`` in the memory layout ``layout`` (the same values)."""
    if layout == "F":
        return np.asfortranarray(a)
    if layout == "transposed":
        return np.ascontiguousarray(a.transpose()).transpose()
    if layout == "sliced":
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        big[..., ::2] = a
        return big[..., ::2]
    return np.ascontiguousarray(a)


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
