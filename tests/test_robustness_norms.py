"""The norm layers of every tier against bad arguments, bad inputs and careless callers.

1. A table of bad constructor arguments, inputs, upstream gradients and state dicts per layer:
   each raises an error of the fitting type whose message says what was expected.
2. State: x and dy are never changed; nothing a call returns shares memory with anything the
   layer keeps, so changing y, x or dx afterwards changes nothing; a forward that fails changes
   nothing (state dict, and the cache the next backward uses); load_state_dict loads all or
   nothing; copies (copy.deepcopy, pickle) compute what the original does; train() and eval()
   switch over several steps.
"""

import copy
import pickle
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from norm_tiers import (LAYOUTS, NORMS, SPATIAL_DIMS, TIER_IDS, TIERS, arrays_in, channel_axis, configs,
                        in_layout, randomized, suite_settings, wrong_shape)

tiers = pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)
norms = pytest.mark.parametrize("name", NORMS + ("DyT",))  # DyT: the reference tier only (no fast twin)
SETTINGS = suite_settings(max_examples=25)

# A working layer per norm for the tables: name -> (args, kwargs, input shape).
BASIC = {
    "LayerNorm": ((4,), {}, (2, 3, 4)),
    "RMSNorm": ((4,), {}, (2, 3, 4)),
    "DyT": ((4,), {}, (2, 3, 4)),
    "BatchNorm1d": ((3,), {}, (4, 3, 2)),
    "BatchNorm2d": ((3,), {}, (2, 3, 2, 2)),
    "GroupNorm": ((2, 4), {}, (2, 4, 3)),
    "InstanceNorm1d": ((3,), {"affine": True, "track_running_stats": True}, (2, 3, 4)),
    "InstanceNorm2d": ((3,), {"affine": True, "track_running_stats": True}, (2, 3, 2, 3)),
    "BatchNorm3d": ((3,), {"bias": False}, (2, 3, 2, 1, 2)),
    "InstanceNorm3d": ((2,), {"affine": True, "bias": False, "track_running_stats": True}, (2, 2, 2, 3, 2)),
}


def layer_class(tier, name):
    """The class ``name`` of ``tier``; a skip, with the reason, for DyT in the fast tier, which
    has none (``nn.norm_class`` gives the reference DyT for both tiers)."""
    if not hasattr(tier, name):
        pytest.skip(f"{tier.__name__} has no {name}: the reference class serves both tiers")
    return getattr(tier, name)


def basic(tier, name, rng=None):
    """(a layer with a random state, an input for it)."""
    rng = np.random.default_rng(0) if rng is None else rng
    args, kwargs, shape = BASIC[name]
    return randomized(layer_class(tier, name)(*args, **kwargs), rng), rng.standard_normal(shape)


# --- 1. bad constructor arguments -----------------------------------------------------------------

CONSTRUCTOR_ERRORS = [
    # sizes must be integers: never truncated, never a string
    ("BatchNorm1d", (2.5,), {}, TypeError, r"BatchNorm1d: num_features must be an int, got 2\.5 \(float\)"),
    ("BatchNorm2d", ("3",), {}, TypeError, r"BatchNorm2d: num_features must be an int, got '3' \(str\)"),
    ("BatchNorm1d", (None,), {}, TypeError, r"num_features must be an int, got None"),
    ("BatchNorm1d", (True,), {}, TypeError, r"num_features must be an int, got True \(bool\)"),
    ("BatchNorm1d", (0,), {}, ValueError, r"num_features must be a positive int, got 0"),
    ("InstanceNorm1d", (3.0,), {}, TypeError, r"InstanceNorm1d: num_features must be an int, got 3\.0"),
    ("InstanceNorm2d", (-2,), {}, ValueError, r"InstanceNorm2d: num_features must be a positive int, got -2"),
    ("GroupNorm", (2, 4.5), {}, TypeError, r"GroupNorm: num_channels must be an int, got 4\.5 \(float\)"),
    ("GroupNorm", (2.0, 4), {}, TypeError, r"GroupNorm: num_groups must be an int, got 2\.0 \(float\)"),
    ("GroupNorm", (0, 4), {}, ValueError, r"num_groups must be a positive int, got 0"),
    ("GroupNorm", (3, 4), {}, ValueError, r"num_channels \(4\) must be divisible by num_groups \(3\)"),
    ("GroupNorm", (8, 4), {}, ValueError, r"num_channels \(4\) must be divisible by num_groups \(8\)"),
    ("LayerNorm", ("88",), {}, TypeError, r"LayerNorm: normalized_shape must be an int or a tuple of ints, got '88' \(str\)"),
    ("LayerNorm", (None,), {}, TypeError, r"normalized_shape must be an int or a tuple of ints, got None \(NoneType\)"),
    ("LayerNorm", (4.0,), {}, TypeError, r"normalized_shape must be an int or a tuple of ints, got 4\.0 \(float\)"),
    ("LayerNorm", ((2, 2.5),), {}, TypeError, r"normalized_shape must be an int, got 2\.5"),
    ("LayerNorm", ((),), {}, ValueError, r"normalized_shape must be a positive int or a non-empty tuple"),
    ("LayerNorm", ((3, 0),), {}, ValueError, r"normalized_shape must be a positive int, got 0"),
    ("RMSNorm", ("8",), {}, TypeError, r"RMSNorm: normalized_shape must be an int or a tuple of ints, got '8'"),
    ("RMSNorm", ([4, None],), {}, TypeError, r"RMSNorm: normalized_shape must be an int, got None"),
    ("DyT", ("8",), {}, TypeError, r"DyT: normalized_shape must be an int or a tuple of ints, got '8' \(str\)"),
    ("DyT", ((2, 0),), {}, ValueError, r"DyT: normalized_shape must be a positive int, got 0"),
    ("DyT", (3,), {"alpha_init": "0.5"}, TypeError, r"DyT: alpha_init must be a number, got '0\.5' \(str\)"),
    ("DyT", (3,), {"alpha_init": float("nan")}, ValueError, r"DyT: alpha_init must be finite, got nan"),
    ("DyT", (3,), {"alpha_init": -2}, None, None),  # a negative alpha is a valid start
    # numbers must be numbers, in range
    ("BatchNorm1d", (3,), {"momentum": "0.1"}, TypeError, r"BatchNorm1d: momentum must be a number or None, got '0\.1' \(str\)"),
    ("InstanceNorm1d", (3,), {"momentum": "0.1"}, TypeError, r"InstanceNorm1d: momentum must be a number or None, got '0\.1'"),
    ("BatchNorm2d", (3,), {"momentum": 1.5}, ValueError, r"BatchNorm2d: momentum must be in \[0, 1\], got 1\.5"),
    ("BatchNorm1d", (3,), {"momentum": float("nan")}, ValueError, r"momentum must be in \[0, 1\], got nan"),
    ("BatchNorm1d", (3,), {"eps": "1e-5"}, TypeError, r"BatchNorm1d: eps must be a number, got '1e-5' \(str\)"),
    ("LayerNorm", (3,), {"eps": "1e-5"}, TypeError, r"LayerNorm: eps must be a number, got '1e-5' \(str\)"),
    ("RMSNorm", (3,), {"eps": "1e-5"}, TypeError, r"RMSNorm: eps must be a number, got '1e-5' \(str\)"),
    ("GroupNorm", (1, 3), {"eps": None}, TypeError, r"GroupNorm: eps must be a number, got None"),
    ("LayerNorm", (3,), {"eps": -1e-5}, ValueError, r"LayerNorm: eps must be >= 0, got -1e-05"),
    ("BatchNorm1d", (3,), {"eps": float("nan")}, ValueError, r"BatchNorm1d: eps must be >= 0, got nan"),
    ("RMSNorm", (3,), {"eps": float("inf")}, ValueError, r"RMSNorm: eps must be >= 0, got inf"),
    # flags must be bools: a string "yes" (or "False") is not one
    ("BatchNorm1d", (3,), {"affine": "yes"}, TypeError, r"BatchNorm1d: affine must be True or False, got 'yes'"),
    ("GroupNorm", (1, 3), {"affine": "yes"}, TypeError, r"GroupNorm: affine must be True or False, got 'yes'"),
    ("InstanceNorm2d", (3,), {"affine": "yes"}, TypeError, r"InstanceNorm2d: affine must be True or False, got 'yes'"),
    ("BatchNorm2d", (3,), {"track_running_stats": "False"}, TypeError, r"track_running_stats must be True or False, got 'False'"),
    ("LayerNorm", (3,), {"elementwise_affine": "yes"}, TypeError, r"LayerNorm: elementwise_affine must be True or False"),
    ("LayerNorm", (3,), {"bias": 1}, TypeError, r"LayerNorm: bias must be True or False, got 1"),
    ("RMSNorm", (3,), {"elementwise_affine": None}, TypeError, r"RMSNorm: elementwise_affine must be True or False"),
    ("DyT", (3,), {"bias": "no"}, TypeError, r"DyT: bias must be True or False, got 'no'"),
    ("BatchNorm3d", (3,), {"bias": 0}, TypeError, r"BatchNorm3d: bias must be True or False, got 0"),
    ("GroupNorm", (1, 3), {"bias": None}, TypeError, r"GroupNorm: bias must be True or False, got None"),
    ("InstanceNorm3d", (3,), {"affine": False, "bias": "no"}, TypeError,
     r"InstanceNorm3d: bias must be True or False, got 'no'"),
    ("InstanceNorm3d", (2.0,), {}, TypeError, r"InstanceNorm3d: num_features must be an int, got 2\.0 \(float\)"),
    ("DyT", (3,), {"dtype": np.int32}, TypeError, r"DyT: dtype must be float16, float32 or float64"),
    # parameters are floats
    ("LayerNorm", (3,), {"dtype": np.int32}, TypeError, r"LayerNorm: dtype must be float16, float32 or float64"),
    ("BatchNorm1d", (3,), {"dtype": "complex128"}, TypeError, r"BatchNorm1d: dtype must be float16, float32 or float64"),
    ("GroupNorm", (1, 3), {"dtype": "float"}, None, None),  # "float" is float64: fine
]


@tiers
@pytest.mark.parametrize("name, args, kwargs, error, message", CONSTRUCTOR_ERRORS,
                         ids=[f"{c[0]}{c[1]}{c[2]}" for c in CONSTRUCTOR_ERRORS])
def test_bad_constructor_arguments(tier, name, args, kwargs, error, message):
    if error is None:
        layer_class(tier, name)(*args, **kwargs)
        return
    with pytest.raises(error, match=message):
        layer_class(tier, name)(*args, **kwargs)


# --- 1. bad inputs --------------------------------------------------------------------------------

SHAPE_ERRORS = [
    ("BatchNorm1d", (3,), (3,), r"BatchNorm1d expected 2D or 3D input \(got 1D input\)"),
    ("BatchNorm1d", (3,), (2, 3, 4, 5), r"BatchNorm1d expected 2D or 3D input \(got 4D input\)"),
    ("BatchNorm1d", (3,), (), r"expected 2D or 3D input \(got 0D input\)"),
    ("BatchNorm2d", (3,), (2, 3, 4), r"BatchNorm2d expected 4D input \(got 3D input\)"),
    ("BatchNorm2d", (3,), (2, 3, 4, 4, 1), r"expected 4D input \(got 5D input\)"),
    ("InstanceNorm1d", (3,), (3,), r"InstanceNorm1d expected 3D or unbatched 2D input \(got 1D input\)"),
    ("InstanceNorm2d", (3,), (2, 3), r"InstanceNorm2d expected 4D or unbatched 3D input \(got 2D input\)"),
    ("InstanceNorm2d", (3,), (1, 2, 3, 4, 5), r"expected 4D or unbatched 3D input \(got 5D input\)"),
    ("GroupNorm", (2, 4), (4,), r"GroupNorm\(2, 4\) expected input of shape \(N, 4, \*\), got \(4,\)"),
    ("BatchNorm3d", (3,), (2, 3, 4, 4), r"BatchNorm3d expected 5D input \(got 4D input\)"),
    ("BatchNorm3d", (3,), (2, 3, 2, 2, 2, 2), r"BatchNorm3d expected 5D input \(got 6D input\)"),
    ("InstanceNorm3d", (3,), (3, 4, 4), r"InstanceNorm3d expected 5D or unbatched 4D input \(got 3D input\)"),
    ("InstanceNorm3d", (3,), (1, 3, 2, 2, 2, 2), r"expected 5D or unbatched 4D input \(got 6D input\)"),
    ("BatchNorm3d", (2,), (2, 3, 2, 2, 2), r"BatchNorm3d\(2\) expected input with 2 channels on axis 1"),
    ("InstanceNorm3d", (2,), (3, 2, 2, 2), r"InstanceNorm3d\(2\) expected input with 2 channels on axis 0"),
    ("BatchNorm3d", (3,), (1, 3, 1, 1, 1), r"Expected more than 1 value per channel when training, got input size \(1, 3, 1, 1, 1\)"),
    ("InstanceNorm3d", (3,), (2, 3, 1, 1, 1), r"Expected more than 1 spatial element when training, got input size \(2, 3, 1, 1, 1\)"),
    ("InstanceNorm3d", (3,), (3, 1, 1, 1), r"Expected more than 1 spatial element when training, got input size \(3, 1, 1, 1\)"),
    # the wrong number of channels
    ("BatchNorm1d", (5,), (2, 3), r"BatchNorm1d\(5\) expected input with 5 channels on axis 1, got input of shape \(2, 3\)"),
    ("BatchNorm1d", (3,), (2, 4, 6), r"BatchNorm1d\(3\) expected input with 3 channels on axis 1, got input of shape \(2, 4, 6\)"),
    ("BatchNorm2d", (2,), (2, 3, 4, 4), r"BatchNorm2d\(2\) expected input with 2 channels on axis 1"),
    ("GroupNorm", (2, 4), (2, 6, 3), r"GroupNorm\(2, 4\) expected input of shape \(N, 4, \*\), got \(2, 6, 3\)"),
    ("InstanceNorm1d", (4,), (2, 3, 5), r"InstanceNorm1d\(4\) expected input with 4 channels on axis 1, got input of shape \(2, 3, 5\)"),
    ("InstanceNorm1d", (4,), (3, 5), r"InstanceNorm1d\(4\) expected input with 4 channels on axis 0, got input of shape \(3, 5\)"),
    ("InstanceNorm2d", (2,), (3, 4, 4), r"InstanceNorm2d\(2\) expected input with 2 channels on axis 0"),
    # the wrong normalized shape
    ("LayerNorm", (5,), (2, 4), r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size \[2, 4\]"),
    ("LayerNorm", ((2, 3),), (3,), r"Given normalized_shape=\[2, 3\], expected input with shape \[\*, 2, 3\], but got input of size \[3\]"),
    ("LayerNorm", ((2, 3),), (4, 3, 2), r"expected input with shape \[\*, 2, 3\], but got input of size \[4, 3, 2\]"),
    ("LayerNorm", (3,), (), r"expected input with shape \[\*, 3\], but got input of size \[\]"),
    ("RMSNorm", (5,), (2, 4), r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size \[2, 4\]"),
    ("RMSNorm", ((4, 2),), (4,), r"expected input with shape \[\*, 4, 2\], but got input of size \[4\]"),
    ("DyT", (5,), (2, 4), r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of size \[2, 4\]"),
    ("DyT", ((2, 3),), (3,), r"expected input with shape \[\*, 2, 3\], but got input of size \[3\]"),
    # one value per channel (PyTorch's errors)
    ("BatchNorm1d", (3,), (1, 3), r"Expected more than 1 value per channel when training, got input size \(1, 3\)"),
    ("BatchNorm2d", (3,), (1, 3, 1, 1), r"Expected more than 1 value per channel when training, got input size \(1, 3, 1, 1\)"),
    ("GroupNorm", (4, 4), (1, 4, 1), r"Expected more than 1 value per channel when training, got input size \(1, 4, 1\)"),
    ("InstanceNorm1d", (3,), (2, 3, 1), r"Expected more than 1 spatial element when training, got input size \(2, 3, 1\)"),
    ("InstanceNorm2d", (3,), (3, 1, 1), r"Expected more than 1 spatial element when training, got input size \(3, 1, 1\)"),
]


@tiers
@pytest.mark.parametrize("name, args, shape, message", SHAPE_ERRORS,
                         ids=[f"{c[0]}{c[1]}-{c[2]}" for c in SHAPE_ERRORS])
def test_inputs_of_the_wrong_shape(tier, name, args, shape, message):
    with pytest.raises(ValueError, match=message):
        layer_class(tier, name)(*args)(np.ones(shape))


NOT_FLOAT = [np.int8, np.int32, np.int64, np.uint8, np.bool_, np.complex64, np.complex128, "datetime64[s]"]


@tiers
@norms
@pytest.mark.parametrize("dtype", NOT_FLOAT, ids=lambda d: np.dtype(d).name)
def test_integer_bool_and_complex_inputs(tier, name, dtype):
    layer, x = basic(tier, name)
    message = (rf"{name} expects a floating-point input \(float16, float32 or float64\), "
               rf"got dtype {re.escape(np.dtype(dtype).name)}")
    with pytest.raises(TypeError, match=message):
        layer(np.zeros(x.shape, dtype=dtype))
    if dtype in (np.int64, np.bool_):
        with pytest.raises(TypeError, match=message):  # a list of Python ints or bools too
            layer(np.zeros(x.shape, dtype=dtype).tolist())


NOT_ARRAYS = {
    "ragged list": [[1.0, 2.0, 3.0], [1.0, 2.0]],
    "string": "1.0 2.0 3.0",
    "None": None,
    "object array": np.array([[1.0, None, 3.0]], dtype=object),
    "array of strings": np.array([["1", "2", "3"]]),
    "dict": {"x": 1.0},
}


@tiers
@norms
@pytest.mark.parametrize("what", list(NOT_ARRAYS))
def test_inputs_that_are_not_arrays_of_numbers(tier, name, what):
    layer, _ = basic(tier, name)
    with pytest.raises(TypeError, match=rf"{name} expects its input as an array of numbers, got "):
        layer(NOT_ARRAYS[what])


@tiers
@norms
def test_nested_lists_of_floats_are_inputs(tier, name):
    layer, x = basic(tier, name)
    np.testing.assert_array_equal(layer(x.tolist()), layer(x))


# --- 1. bad upstream gradients --------------------------------------------------------------------

@tiers
@norms
def test_backward_before_forward(tier, name):
    layer, _ = basic(tier, name)
    with pytest.raises(RuntimeError, match=rf"{name}\.backward\(\) was called before forward\(\): run forward first"):
        layer.backward(np.ones(BASIC[name][2]))


@tiers
@norms
def test_backward_after_only_a_failed_forward(tier, name):
    layer, x = basic(tier, name)
    with pytest.raises(ValueError):
        layer(np.ones(wrong_shape(name, x.shape)))
    with pytest.raises(RuntimeError, match=r"called before forward\(\)"):
        layer.backward(np.ones(x.shape))


@tiers
@norms
def test_upstream_gradient_of_the_wrong_shape(tier, name):
    layer, x = basic(tier, name)
    layer(x)
    for shape in [wrong_shape(name, x.shape), x.shape[:-1], x.shape + (1,), x.shape[::-1], ()]:
        if shape == x.shape:
            continue
        message = rf"{name}\.backward expects an upstream gradient of the output's shape {re.escape(str(x.shape))}, got {re.escape(str(shape))}"
        with pytest.raises(ValueError, match=message):
            layer.backward(np.ones(shape))


@tiers
@norms
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.bool_, np.complex128], ids=lambda d: np.dtype(d).name)
def test_upstream_gradient_of_the_wrong_dtype(tier, name, dtype):
    layer, x = basic(tier, name)
    layer(x)
    with pytest.raises(TypeError, match=rf"{name}\.backward expects a floating-point upstream gradient, got dtype {np.dtype(dtype).name}"):
        layer.backward(np.ones(x.shape, dtype))


@tiers
@norms
@pytest.mark.parametrize("what", ["ragged list", "string", "None", "object array"])
def test_upstream_gradient_that_is_not_an_array_of_numbers(tier, name, what):
    """As for the input: a TypeError that names the layer's backward, not NumPy's error about
    sequences or a shape () that the caller never gave."""
    layer, x = basic(tier, name)
    layer(x)
    dy = np.full(x.shape, None, dtype=object) if what == "object array" else NOT_ARRAYS[what]
    with pytest.raises(TypeError, match=rf"{name}\.backward expects .*upstream gradient"):
        layer.backward(dy)


# --- 1 and 2. state dicts -------------------------------------------------------------------------

def bad_state_dicts(layer):
    """(label, bad state dict, error type, message) for ``layer``. Every entry but the bad
    one holds a valid new value, so that a half-done load shows."""
    good = {key: value + 1 for key, value in layer.state_dict().items()}
    keys = list(good)
    first, last = keys[0], keys[-1]
    shape = good[last].shape
    return [
        ("missing key", {k: v for k, v in good.items() if k != last}, KeyError, rf"missing keys \['{last}'\]"),
        ("unexpected key", {**good, "running_mean_typo": np.zeros(3)}, KeyError, r"unexpected keys \['running_mean_typo'\]"),
        ("prefixed keys", {f"norm.{k}": v for k, v in good.items()}, KeyError, rf"unexpected keys \['norm\.{first}'"),
        ("wrong shape", {**good, last: np.zeros(shape + (2,), good[last].dtype)}, ValueError,
         rf"'{last}' expected shape {re.escape(str(shape))}, got"),
        ("None value", {**good, last: None}, TypeError, rf"'{last}'"),
        ("string value", {**good, last: np.full(shape, "x")}, TypeError, rf"'{last}'"),
        ("object array", {**good, last: np.full(shape, None, dtype=object)}, TypeError, rf"'{last}'"),
        ("complex value", {**good, last: np.zeros(shape, complex)}, TypeError, rf"'{last}'"),
        ("a list, not a dict", list(good.values()), TypeError, r"load_state_dict expects a mapping .*, got list"),
        ("None, not a dict", None, TypeError, r"load_state_dict expects a mapping .*, got NoneType"),
    ]


STATE_CASES = ["missing key", "unexpected key", "prefixed keys", "wrong shape", "None value", "string value",
               "object array", "complex value", "a list, not a dict", "None, not a dict"]


def assert_same_state(after, before, what):
    assert list(after) == list(before), what
    for key in before:
        assert after[key].dtype == before[key].dtype, f"{what}: {key} dtype changed"
        np.testing.assert_array_equal(after[key], before[key], err_msg=f"{what}: {key} changed")


@tiers
@norms
@pytest.mark.parametrize("case", STATE_CASES)
def test_bad_state_dicts_raise_the_fitting_error(tier, name, case):
    layer, _ = basic(tier, name)
    label, bad, error, message = next(c for c in bad_state_dicts(layer) if c[0] == case)
    with pytest.raises(error, match=message):
        layer.load_state_dict(bad)


@tiers
@norms
@pytest.mark.parametrize("case", STATE_CASES)
def test_a_failed_load_loads_nothing(tier, name, case):
    """load_state_dict is atomic: after any failing load, state_dict() is what it was."""
    layer, _ = basic(tier, name)
    label, bad, error, message = next(c for c in bad_state_dicts(layer) if c[0] == case)
    before = layer.state_dict()
    try:
        layer.load_state_dict(bad)
    except (TypeError, ValueError, KeyError):
        pass
    else:
        pytest.fail(f"{label}: loaded without an error")
    assert_same_state(layer.state_dict(), before, label)


@tiers
@norms
def test_state_dicts_are_copies(tier, name):
    """Changing the dict state_dict() gave, or the one load_state_dict took, changes nothing."""
    layer, x = basic(tier, name)
    given_out = layer.state_dict()
    saved = copy.deepcopy(given_out)
    for value in given_out.values():
        value[...] = 7
    loaded = {key: value.copy() for key, value in saved.items()}
    fresh = layer_class(tier, name)(*BASIC[name][0], **BASIC[name][1])
    fresh.load_state_dict(loaded)
    for value in loaded.values():
        value[...] = 9
    for key, value in saved.items():
        np.testing.assert_array_equal(layer.state_dict()[key], value)
        np.testing.assert_array_equal(fresh.state_dict()[key], value)
        assert fresh.state_dict()[key].dtype == value.dtype


# --- 2. x and dy unchanged, nothing shared --------------------------------------------------------

def case_layer(tier, name, config, dtype, rng):
    args, kwargs, shape, free_axes = config
    return randomized(layer_class(tier, name)(*args, **kwargs, dtype=dtype), rng)


def forward(layer, x):
    """layer(x), or None when the case has one value per channel (or spatial element) in
    training, which raises as in PyTorch."""
    try:
        return layer(x)
    except ValueError as exc:
        assert "Expected more than 1" in str(exc)
        return None


def shared(a, arrays):
    return [i for i, b in enumerate(arrays) if np.shares_memory(a, b)]


def shared_arrays(one, other):
    """Pairs of arrays, one held by each module, that share memory."""
    theirs = arrays_in(other)
    return [(i, j) for i, a in enumerate(arrays_in(one)) for j in shared(a, theirs)]


@tiers
@norms
@SETTINGS
@given(data=st.data())
def test_inputs_unchanged_and_outputs_not_shared(tier, name, data):
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    dtype = data.draw(st.sampled_from([np.float64, np.float32, np.float16]), label="dtype")
    training = data.draw(st.booleans(), label="training")
    lx, ldy = data.draw(st.sampled_from(LAYOUTS), label="x layout"), data.draw(st.sampled_from(LAYOUTS), label="dy layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape, free_axes = config[2], config[3]
    layer = case_layer(tier, name, config, dtype, rng).train(training)
    x = in_layout(rng.standard_normal(shape).astype(dtype), lx, rng, free_axes)
    dy = in_layout(rng.standard_normal(shape).astype(dtype), ldy, rng, free_axes)
    x0, dy0 = x.copy(), dy.copy()
    y = forward(layer, x)
    if y is None:
        return
    dx = layer.backward(dy)
    np.testing.assert_array_equal(x, x0, err_msg="forward changed x")
    np.testing.assert_array_equal(dy, dy0, err_msg="backward changed dy")
    assert y.dtype == dx.dtype == np.dtype(dtype) and y.shape == dx.shape == shape
    kept = arrays_in(layer)  # the cache, parameters, gradients, buffers: all the layer holds
    assert kept, "the layer holds no arrays?"
    for out, label in ((y, "y"), (dx, "dx")):
        assert not shared(out, kept), f"{label} shares memory with what the layer keeps"
        assert not shared(out, [x, dy]), f"{label} shares memory with the caller's x or dy"
    assert not np.shares_memory(y, dx)


@tiers
@norms
@SETTINGS
@given(data=st.data())
def test_changing_returned_arrays_changes_nothing(tier, name, data):
    """Writing into y, x, dx or dy after the calls changes neither the next backward nor the
    next forward."""
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    training = data.draw(st.booleans(), label="training")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape = config[2]
    layer = case_layer(tier, name, config, np.float64, rng).train(training)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    x0, dy0 = x.copy(), dy.copy()
    state = layer.state_dict()
    y = forward(layer, x)
    if y is None:
        return
    layer.zero_grad()
    dx = layer.backward(dy)
    y0, dx0, grads0 = y.copy(), dx.copy(), [p.grad.copy() for p in layer.parameters()]
    for a in (y, x, dx, dy):
        a[...] = 1e6
    layer.zero_grad()
    np.testing.assert_array_equal(layer.backward(dy0), dx0, err_msg="dx changed")
    for p, g in zip(layer.parameters(), grads0):
        np.testing.assert_array_equal(p.grad, g, err_msg="a parameter's gradient changed")
    if training and getattr(layer, "track_running_stats", False):
        return  # the running statistics moved on; the first forward's output is not expected again
    layer.load_state_dict(state)
    np.testing.assert_array_equal(layer(x0), y0, err_msg="y changed")


# --- 2. a failed forward changes nothing ----------------------------------------------------------

def bad_inputs(name, layer, shape, dtype):
    """Inputs the layer must refuse: (label, input)."""
    bad = [("wrong shape", np.ones(wrong_shape(name, shape), dtype)),
           ("integers", np.ones(shape, np.int64)),
           ("ragged list", [[1.0, 2.0], [1.0]]),
           ("None", None)]
    if name.startswith("BatchNorm") and layer.training:
        bad.append(("one value per channel", np.ones((1,) + shape[1:2] + (1,) * (len(shape) - 2), dtype)))
    if name.startswith("InstanceNorm"):  # batched after unbatched, and the other way round
        d = SPATIAL_DIMS[name] + 2
        other = (2,) + shape if len(shape) < d else shape[1:]
        bad.append(("other batching, wrong channels", np.ones(wrong_shape(name, other), dtype)))
        if layer.training or not layer.track_running_stats:
            bad.append(("other batching, one spatial value", np.ones(other[:len(other) - d + 2] + (1,) * (d - 2), dtype)))
    if name == "GroupNorm":
        bad.append(("one value per group", np.ones((1, layer.num_channels) + (1,) * (len(shape) - 2), dtype)
                    if layer.num_groups == layer.num_channels else np.ones(wrong_shape(name, shape), dtype)))
    return bad


@tiers
@norms
@SETTINGS
@given(data=st.data())
def test_a_failed_forward_changes_nothing(tier, name, data):
    """The state dict stays as it was, and the next backward uses the last successful
    forward's cache: same dx, same gradients."""
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    training = data.draw(st.booleans(), label="training")
    dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape = config[2]
    layer = case_layer(tier, name, config, dtype, rng).train(training)
    x, dy = rng.standard_normal(shape).astype(dtype), rng.standard_normal(shape).astype(dtype)
    if forward(layer, x) is None:
        return
    layer.zero_grad()
    dx = layer.backward(dy)
    grads = [p.grad.copy() for p in layer.parameters()]
    state = layer.state_dict()
    for label, bad in bad_inputs(name, layer, shape, dtype):
        with pytest.raises((TypeError, ValueError)):
            layer(bad)
        after = layer.state_dict()
        assert list(after) == list(state)
        for key in state:
            np.testing.assert_array_equal(after[key], state[key], err_msg=f"{label}: {key} changed")
        assert layer.training == training
        layer.zero_grad()
        np.testing.assert_array_equal(layer.backward(dy), dx, err_msg=f"{label}: dx changed")
        for p, g in zip(layer.parameters(), grads):
            np.testing.assert_array_equal(p.grad, g, err_msg=f"{label}: a gradient changed")


# --- 2. copies ------------------------------------------------------------------------------------

COPIES = {"deepcopy": copy.deepcopy, "pickle": lambda m: pickle.loads(pickle.dumps(m))}


@tiers
@norms
@pytest.mark.parametrize("how", list(COPIES))
@SETTINGS
@given(data=st.data())
def test_copies_compute_what_the_original_does(tier, name, how, data):
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    modes = data.draw(st.lists(st.booleans(), min_size=1, max_size=3), label="training, per step")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape = config[2]
    layer = case_layer(tier, name, config, np.float64, rng)
    if forward(layer, rng.standard_normal(shape)) is None:  # a cache for the copy to take over
        return
    twin = COPIES[how](layer)
    assert type(twin) is type(layer) and twin.training == layer.training
    assert not shared_arrays(layer, twin), "the copy shares arrays with the original"
    dy = rng.standard_normal(shape)
    for step, training in enumerate([True] + modes):
        if step:  # a new forward of both (the first backward uses the copied cache)
            layer.train(training)
            twin.train(training)
            x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
            y = forward(layer, x)
            if y is None:
                with pytest.raises(ValueError):
                    twin(x)
                continue
            np.testing.assert_array_equal(twin(x), y, err_msg=f"step {step}: y")
        np.testing.assert_array_equal(twin.backward(dy), layer.backward(dy), err_msg=f"step {step}: dx")
        for (key, p), (_, q) in zip(layer.named_parameters(), twin.named_parameters()):
            np.testing.assert_array_equal(q.grad, p.grad, err_msg=f"step {step}: d{key}")
        for key, value in layer.state_dict().items():
            np.testing.assert_array_equal(twin.state_dict()[key], value, err_msg=f"step {step}: {key}")


# --- 2. train() and eval() ------------------------------------------------------------------------

@tiers
@norms
@SETTINGS
@given(data=st.data())
def test_train_and_eval_switch_over_several_steps(tier, name, data):
    """train() and eval() return the layer and set .training; training steps update the running
    statistics (BatchNorm counts them), evaluation steps change nothing and, with running
    statistics, use them as constants; a layer without running statistics computes the same
    in both modes."""
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    modes = data.draw(st.lists(st.booleans(), min_size=2, max_size=6), label="training, per step")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape = config[2]
    layer = case_layer(tier, name, config, np.float64, rng)
    assert layer.training
    assert layer.eval() is layer and not layer.training
    assert layer.train() is layer and layer.training
    assert layer.train(False) is layer and not layer.training
    tracked = getattr(layer, "track_running_stats", False)
    for step, training in enumerate(modes):
        assert layer.train(training) is layer and layer.training is training
        x, dy = rng.standard_normal(shape) * 2 + 1, rng.standard_normal(shape)
        before = layer.state_dict()
        other = copy.deepcopy(layer).train(not training)
        y = forward(layer, x)
        after = layer.state_dict()
        if not tracked:  # the same function in both modes, errors included
            y_other = forward(other, x)
            assert (y is None) == (y_other is None), f"step {step}: raises in one mode only"
        if y is None:
            assert all(np.array_equal(after[k], before[k]) for k in before), f"step {step}: a failed forward changed the state"
            continue
        dx = layer.backward(dy)
        for key in before:
            changes = training and tracked and key in ("running_mean", "running_var", "num_batches_tracked")
            if key == "num_batches_tracked" and changes:
                expected = before[key] + (1 if name.startswith("BatchNorm") else 0)  # InstanceNorm counts none
                assert after[key] == expected, f"step {step}: num_batches_tracked {after[key]}, expected {expected}"
            elif not changes or x.size == 0 or (key != "num_batches_tracked" and layer.momentum in (0.0, None)
                                                and not name.startswith("BatchNorm")):
                np.testing.assert_array_equal(after[key], before[key], err_msg=f"step {step}: {key} changed")
        if tracked and not training:  # the running statistics, constants
            view = [1] * len(shape)
            view[channel_axis(name, shape)] = -1
            rstd = 1 / np.sqrt(before["running_var"].reshape(view) + layer.eps)
            gamma = before["weight"].reshape(view) if "weight" in before else 1.0
            beta = before["bias"].reshape(view) if "bias" in before else 0.0
            np.testing.assert_allclose(y, (x - before["running_mean"].reshape(view)) * rstd * gamma + beta,
                                       rtol=1e-12, atol=1e-12, err_msg=f"step {step}: y in evaluation")
            np.testing.assert_allclose(dx, dy * gamma * rstd, rtol=1e-12, atol=1e-12,
                                       err_msg=f"step {step}: dx in evaluation")
        elif not tracked:
            np.testing.assert_array_equal(y_other, y, err_msg=f"step {step}: y differs between the modes")
            np.testing.assert_array_equal(other.backward(dy), dx, err_msg=f"step {step}: dx differs between the modes")
