"""Every norm layer of every tier against PyTorch, on cases hypothesis draws.

A case is a layer configuration (affine or not, LayerNorm's bias, eps, momentum including
None, track_running_stats), an input shape of random rank (size-1 and zero-size axes included
wherever PyTorch accepts them), a dtype, and a sequence of training and evaluation steps. Both
layers start from the same random state: PyTorch's state dict, converted to NumPy, is loaded
into normcore's layer. Each step feeds both the same input (to normcore in a random memory
layout: C, Fortran, transposed, stepped, negative strides, broadcast, read-only) and the same
random upstream gradient, and compares the output, dx, the gradients of gamma and beta
(accumulated over the steps, never zeroed), and the whole state dict: keys, order, dtypes and
values, so running_mean, running_var and num_batches_tracked too. When PyTorch raises (one
value per channel in training), normcore must raise the same type of error and change nothing.
At the end PyTorch's state dict is loaded into a new layer, which must give PyTorch's outputs.

In float64 normcore must agree with PyTorch to 1e-10. In float32 and float16 both are
compared with PyTorch in float64 run on the same (rounded) inputs and state: normcore's error
must be below a tolerance for the dtype, or at most a few times PyTorch's own. (An
ill-conditioned case, such as two nearly equal values normalised together, magnifies every
rounding error; normcore keeps its statistics in float64 and is the more accurate of the two.)
"""

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from normcore._install import TORCH_CPU
from norm_tiers import LAYOUTS, NORMS, TIER_IDS, TIERS, configs, in_layout, suite_settings

torch = pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")

DTYPES = (np.float64, np.float32, np.float16)
TORCH_DTYPE = {np.float64: torch.float64, np.float32: torch.float32, np.float16: torch.float16}
# Error measure: max|a - b| / max(1, max|b|), b the float64 reference. float32 and float16
# inputs are computed in float32; float16 results are then rounded to float16 (spacing 2**-8
# near 4, relative 2**-11).
TOL = {np.float64: 1e-10, np.float32: 1e-5, np.float16: 2e-3}
AS_GOOD = 4  # in float32 and float16, normcore's error may be up to AS_GOOD times PyTorch's

SETTINGS = suite_settings(max_examples=50)

@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """The tensors are tiny: PyTorch's threads only wait for each other (on a busy machine,
    for seconds)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("name", NORMS)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)
@SETTINGS
@given(data=st.data())
def test_matches_pytorch(tier, dtype, name, data):
    config = data.draw(configs(name), label="args, kwargs, shape, free axes")
    modes = data.draw(st.lists(st.sampled_from(["train", "eval"]), min_size=1, max_size=3), label="modes")
    modes = ["train"] + modes + ["eval"]  # training first, evaluation last
    layouts = data.draw(st.lists(st.tuples(st.sampled_from(LAYOUTS), st.sampled_from(LAYOUTS)),
                                 min_size=len(modes), max_size=len(modes)), label="layouts of x and dy")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    run_both(tier, dtype, name, *config, modes, layouts, seed)


def run_both(tier, dtype, name, args, kwargs, shape, free_axes, modes, layouts, seed):
    """The steps ``modes`` on normcore's layer and on PyTorch's, from the same random state."""
    rng = np.random.default_rng(seed)
    theirs = getattr(torch.nn, name)(*args, **kwargs).to(TORCH_DTYPE[dtype])
    random_state(theirs, rng)
    # PyTorch in float64 on the same values: the reference for float32 and float16.
    exact = getattr(torch.nn, name)(*args, **kwargs).double() if dtype != np.float64 else None
    ours = getattr(tier, name)(*args, **kwargs, dtype=dtype)
    for layer in (exact, ours):
        if layer is not None:
            layer.load_state_dict(to_layer(layer, as_numpy(theirs.state_dict())))
    same_state(ours.state_dict(), as_numpy(theirs.state_dict()), "loaded")

    scale, shift = rng.choice([0.5, 1.0, 4.0]), rng.choice([-3.0, 0.0, 2.0])
    for step, (mode, (x_layout, dy_layout)) in enumerate(zip(modes, layouts)):
        for layer in (theirs, exact, ours):
            if layer is not None:
                layer.train(mode == "train")
        x = in_layout((rng.standard_normal(shape) * scale + shift).astype(dtype), x_layout, rng, free_axes)
        dy = in_layout(rng.standard_normal(shape).astype(dtype), dy_layout, rng, free_axes)
        x_copy, dy_copy = x.copy(), dy.copy()
        what = f"step {step} ({mode}, x {shape})"
        try:
            got_theirs = torch_step(theirs, x, dy, TORCH_DTYPE[dtype])
        except ValueError as exc:  # e.g. one value per channel in training
            before = ours.state_dict()
            with pytest.raises(ValueError, match=re.escape(str(exc).split(", got")[0])):
                ours(x)
            same_state(ours.state_dict(), before, f"{what}: after the failed forward")
            # PyTorch counts the batch before it raises; normcore changes nothing.
            for layer in (theirs, exact):
                if layer is not None:
                    layer.load_state_dict(to_layer(layer, before))
            continue
        got_exact = None if exact is None else torch_step(exact, x, dy, torch.float64)
        grads_before = {pname: p.grad.copy() for pname, p in ours.named_parameters()}
        y = ours(x)
        dx = ours.backward(dy)
        got_ours = {"output": y, "dx": dx, **{f"d{pname}": p.grad for pname, p in ours.named_parameters()},
                    **ours.state_dict()}
        np.testing.assert_array_equal(x, x_copy, err_msg="forward changed its input")
        np.testing.assert_array_equal(dy, dy_copy, err_msg="backward changed its upstream gradient")
        if x.size == 0:
            # A sum over no values is 0: the gradients of gamma and beta do not change. (PyTorch's
            # GroupNorm gives NaN for gamma's when a spatial axis is empty: 0 times rstd = inf.)
            for pname, g in grads_before.items():
                np.testing.assert_array_equal(got_ours[f"d{pname}"], g, err_msg=f"{what}: d{pname}")
            for layer, got in ((theirs, got_theirs), (exact, got_exact)):
                for pname, p in [] if layer is None else layer.named_parameters():
                    p.grad = torch.from_numpy(grads_before[pname]).to(p.dtype)
                    got[f"d{pname}"] = p.grad.numpy()
        assert list(got_ours) == list(got_theirs), what
        for key, value in got_ours.items():
            agree(value, got_theirs[key], None if got_exact is None else got_exact[key], dtype, f"{what}: {key}")

    # PyTorch's final state loaded into a new layer gives PyTorch's evaluation outputs.
    fresh = getattr(tier, name)(*args, **kwargs, dtype=dtype).eval()
    fresh.load_state_dict(as_numpy(theirs.state_dict()))
    same_state(fresh.state_dict(), as_numpy(theirs.state_dict()), "reloaded")
    x = (rng.standard_normal(shape) * scale + shift).astype(dtype)
    try:
        y_theirs = theirs.eval()(torch.from_numpy(x)).detach().numpy()
    except ValueError:
        with pytest.raises(ValueError):
            fresh(x)
        return
    y_exact = None if exact is None else exact.eval()(torch.from_numpy(x.astype(np.float64))).detach().numpy()
    agree(fresh(x), y_theirs, y_exact, dtype, "reloaded layer: output")


def random_state(theirs, rng):
    """Random values for every entry of PyTorch's state dict: gamma, beta, running_mean,
    running_var > 0, and num_batches_tracked (which momentum=None divides by)."""
    state = {}
    for key, value in theirs.state_dict().items():
        if key == "num_batches_tracked":
            new = torch.tensor(int(rng.integers(0, 6)))
        elif key == "running_var":
            new = torch.from_numpy(rng.uniform(0.5, 2.0, value.shape))
        else:
            new = torch.from_numpy(rng.standard_normal(value.shape) + (key == "weight"))
        state[key] = new.to(value.dtype)
    theirs.load_state_dict(state)


def as_numpy(state):
    """A PyTorch state dict converted to NumPy (copies: PyTorch updates its buffers in place)."""
    return {key: value.detach().clone().numpy() for key, value in state.items()}


def to_layer(layer, state):
    """A NumPy state dict for ``layer``: as it is for normcore, as tensors of the layer's
    dtypes for PyTorch."""
    if not isinstance(layer, torch.nn.Module):
        return state
    dtypes = {key: value.dtype for key, value in layer.state_dict().items()}
    return {key: torch.from_numpy(np.array(value)).to(dtypes[key]) for key, value in state.items()}


def torch_step(layer, x, dy, dtype):
    """PyTorch's forward and backward on C-contiguous copies of x and dy in ``dtype``:
    {output, dx, d<parameter>..., <state dict entries>...} as NumPy arrays."""
    # C-contiguous copies: given an upstream gradient whose strides differ from the input's,
    # e.g. a Fortran-order (1, 2, 1, 2) one, PyTorch's BatchNorm2d backward is wrong.
    xt = torch.from_numpy(np.array(x, order="C")).to(dtype).requires_grad_()
    yt = layer(xt)
    yt.backward(torch.from_numpy(np.array(dy, order="C")).to(dtype))
    grads = {f"d{pname}": p.grad.detach().clone().numpy() for pname, p in layer.named_parameters()}
    return {"output": yt.detach().numpy(), "dx": xt.grad.numpy(), **grads, **as_numpy(layer.state_dict())}


def agree(ours, theirs, exact, dtype, what):
    """normcore's array against PyTorch's (same shape and dtype); values to TOL[dtype] of
    PyTorch's in float64, or of ``exact`` (PyTorch in float64) up to AS_GOOD times PyTorch's
    own error; a count (num_batches_tracked) exactly."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape}, PyTorch {theirs.shape}"
    assert ours.dtype == theirs.dtype, f"{what}: dtype {ours.dtype}, PyTorch {theirs.dtype}"
    if not np.issubdtype(theirs.dtype, np.floating):
        np.testing.assert_array_equal(ours, theirs, err_msg=what)
        return
    if exact is None:
        err = error(ours, theirs)
        assert err <= TOL[dtype], f"{what}: error {err:.3g} against PyTorch > {TOL[dtype]:g}"
        return
    err, err_theirs = error(ours, exact), error(theirs, exact)
    assert err <= max(TOL[dtype], AS_GOOD * err_theirs), (
        f"{what}: error {err:.3g} against PyTorch in float64, PyTorch's own {err_theirs:.3g}")


def error(a, b):
    """max|a - b| / max(1, max|b|), with non-finite values required in the same places."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    assert np.array_equal(np.isfinite(a), np.isfinite(b)), "non-finite values differ"
    finite = np.isfinite(b)
    a, b = a[finite], b[finite]
    return np.max(np.abs(a - b), initial=0) / max(1.0, np.max(np.abs(b), initial=0))


def same_state(ours, theirs, what):
    """Two state dicts equal: keys in the same order, dtypes, shapes and values."""
    assert list(ours) == list(theirs), f"{what}: keys {list(ours)}, expected {list(theirs)}"
    for key, value in ours.items():
        assert value.dtype == theirs[key].dtype, f"{what}: {key} dtype {value.dtype}, expected {theirs[key].dtype}"
        np.testing.assert_array_equal(value, theirs[key], err_msg=f"{what}: {key}")


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (0, 3, 4)), ("InstanceNorm2d", (0, 3, 2, 2)),
                                         ("InstanceNorm3d", (0, 3, 2, 1, 2))])
@pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)
def test_instancenorm_of_an_empty_batch_where_pytorch_fails(tier, name, shape):
    """A documented difference: PyTorch 2.13 raises IndexError on N = 0 (so the hypothesis
    cases keep N >= 1); normcore gives an empty result and changes no running statistic."""
    kwargs = {"affine": True, "track_running_stats": True}
    with pytest.raises(IndexError):
        getattr(torch.nn, name)(3, **kwargs).double()(torch.zeros(shape, dtype=torch.float64))
    ours = getattr(tier, name)(3, **kwargs)
    before = ours.state_dict()
    assert ours(np.zeros(shape)).shape == ours.backward(np.zeros(shape)).shape == shape
    for key, value in before.items():
        np.testing.assert_array_equal(ours.state_dict()[key], value)


ZERO_SIZE = [  # every place PyTorch accepts an empty axis, whatever hypothesis happens to draw
    ("LayerNorm", ((4,), {}), (0, 4), (0,)),
    ("LayerNorm", (((2, 3),), {"bias": False}), (2, 0, 2, 3), (0, 1)),
    ("RMSNorm", ((4,), {}), (3, 0, 4), (0, 1)),
    ("BatchNorm1d", ((3,), {"momentum": None}), (0, 3), (1,)),
    ("BatchNorm1d", ((3,), {}), (2, 3, 0), (1,)),
    ("BatchNorm2d", ((3,), {}), (0, 3, 2, 2), (1,)),
    ("BatchNorm2d", ((3,), {"track_running_stats": False}), (2, 3, 2, 0), (1,)),
    ("GroupNorm", ((2, 4), {}), (0, 4, 3), (0,)),
    ("GroupNorm", ((2, 4), {}), (2, 4, 0), (0,)),
    ("GroupNorm", ((1, 2), {}), (2, 2, 3, 0), (0,)),
    ("InstanceNorm1d", ((3,), {"affine": True, "track_running_stats": True}), (2, 3, 0), (0, 1)),
    ("InstanceNorm1d", ((3,), {"affine": True}), (3, 0), (0,)),
    ("InstanceNorm2d", ((3,), {"affine": True, "track_running_stats": True}), (2, 3, 0, 2), (0, 1)),
    ("BatchNorm3d", ((3,), {"bias": False}), (0, 3, 2, 1, 2), (1,)),
    ("BatchNorm3d", ((3,), {}), (2, 3, 2, 0, 2), (1,)),
    ("GroupNorm", ((2, 4), {"bias": False}), (2, 4, 1, 0, 2), (0,)),
    ("InstanceNorm3d", ((3,), {"affine": True, "bias": False, "track_running_stats": True}), (2, 3, 0, 2, 1), (0, 1)),
    ("InstanceNorm3d", ((3,), {}), (3, 2, 0, 1), (0,)),
]


@pytest.mark.parametrize("name, config, shape, free_axes", ZERO_SIZE, ids=[f"{c[0]}{c[2]}" for c in ZERO_SIZE])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("tier", TIERS, ids=TIER_IDS)
def test_zero_size_inputs_match_pytorch(tier, dtype, name, config, shape, free_axes):
    modes = ["train", "eval", "train", "eval"]
    layouts = [("C", "C"), ("F", "reversed"), ("stepped", "transposed"), ("readonly", "broadcast")]
    run_both(tier, dtype, name, *config, shape, free_axes, modes, layouts, seed=len(shape))
