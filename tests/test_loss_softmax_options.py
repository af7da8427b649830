"""torch's options on the losses and the softmaxes: MSELoss(reduction="sum" | "none") and
Softmax/LogSoftmax(dtype=), forward and hand backward, matched to torch with the gradient."""

import numpy as np
import pytest

import normcore as nc

REDUCTIONS = ["mean", "sum", "none"]


def torch_or_skip():
    return pytest.importorskip("torch", reason="PyTorch is the oracle for the losses' and softmaxes' options")


def upstream(loss, rng):
    """A random upstream gradient of the loss's shape (never ones)."""
    return rng.standard_normal(np.shape(loss)) if np.ndim(loss) else np.float64(0.7)


# --- MSELoss ----------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_reductions_by_their_formulas(reduction):
    rng = np.random.default_rng(0)
    pred, target = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    loss = nc.MSELoss(reduction=reduction)
    value = loss(pred, target)
    g = upstream(value, rng)
    dpred = loss.backward(g)
    diff = pred - target
    expected = {"mean": np.mean(diff**2), "sum": np.sum(diff**2), "none": diff**2}[reduction]
    np.testing.assert_allclose(value, expected, rtol=1e-14)
    scale = {"mean": g / diff.size, "sum": g, "none": g}[reduction]
    np.testing.assert_allclose(dpred, 2 * diff * scale, rtol=1e-14)
    assert value.shape == np.shape(expected) and dpred.shape == pred.shape


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_mse_reductions_match_torch_with_the_gradient(reduction, dtype):
    torch = torch_or_skip()
    rng = np.random.default_rng(1)
    pred, target = (rng.standard_normal((2, 3, 4)).astype(dtype) for _ in range(2))
    loss = nc.MSELoss(reduction=reduction)
    value = loss(pred, target)
    g = np.asarray(upstream(value, rng), dtype=dtype)
    dpred = loss.backward(g)
    t = torch.tensor(pred, requires_grad=True)
    tvalue = torch.nn.MSELoss(reduction=reduction)(t, torch.tensor(target))
    tvalue.backward(torch.tensor(g))
    tol = 1e-10 if dtype == "float64" else 1e-5
    assert value.dtype == tvalue.detach().numpy().dtype and dpred.dtype == t.grad.numpy().dtype
    np.testing.assert_allclose(value, tvalue.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(dpred, t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("reduction, expected", [("mean", np.nan), ("sum", 0.0), ("none", np.zeros((0, 3)))])
def test_mse_over_no_elements_as_torch(reduction, expected):
    loss = nc.MSELoss(reduction=reduction)
    value = loss(np.zeros((0, 3)), np.zeros((0, 3)))
    np.testing.assert_array_equal(value, expected)
    assert loss.backward(np.zeros((0, 3)) if reduction == "none" else 1.0).shape == (0, 3)


def test_mse_reduction_errors_say_what_was_expected():
    with pytest.raises(ValueError, match=r"reduction to be one of \('mean', 'sum', 'none'\), got 'avg'"):
        nc.MSELoss(reduction="avg")
    loss = nc.MSELoss(reduction="none")
    loss(np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"upstream gradient of the loss's shape \(2, 3\), got None"):
        loss.backward()
    with pytest.raises(ValueError):
        loss.backward(1.0)
    scalar = nc.MSELoss(reduction="sum")
    scalar(np.zeros((2, 3)), np.ones((2, 3)))
    with pytest.raises(ValueError, match="real scalar upstream gradient"):
        scalar.backward(np.ones((2, 3)))


def test_mse_none_hands_out_its_own_arrays():
    """The per-element loss is a new array: changing it changes neither the cache nor pred."""
    pred = np.array([1.0, 2.0])
    loss = nc.MSELoss(reduction="none")
    value = loss(pred, np.zeros(2))
    value[...] = 99.0
    np.testing.assert_array_equal(loss.backward(np.ones(2)), [2.0, 4.0])


# --- Softmax and LogSoftmax with dtype= ---------------------------------------------------------

PAIRS = [("float32", "float64"), ("float64", "float32"), ("float16", "float64"), ("float64", "float16")]


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("in_dtype, dtype", PAIRS, ids=[f"{a}-in-{b}" for a, b in PAIRS])
def test_softmax_dtype_casts_the_input_first_and_the_gradient_comes_back_in_the_inputs_dtype(name, in_dtype,
                                                                                            dtype):
    """Without torch: the output is the layer without dtype= on the input cast to dtype, and the
    gradient is that layer's gradient cast back to the input's dtype."""
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 5)) * 3).astype(in_dtype)
    layer = getattr(nc, name)(axis=1, dtype=np.dtype(dtype))
    plain = getattr(nc, name)(axis=1)
    y = layer(x)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = layer.backward(dy)
    assert y.dtype == dtype and dx.dtype == in_dtype
    np.testing.assert_array_equal(y, plain(x.astype(dtype)))
    np.testing.assert_array_equal(dx, plain.backward(dy).astype(in_dtype))


@pytest.mark.parametrize("name", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("in_dtype, dtype", PAIRS, ids=[f"{a}-in-{b}" for a, b in PAIRS])
def test_softmax_dtype_matches_torch_functional_with_the_gradient(name, in_dtype, dtype):
    torch = torch_or_skip()
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((2, 4, 3)) * 3).astype(in_dtype)
    layer = getattr(nc, name)(axis=1, dtype=dtype)
    y = layer(x)
    dy = rng.standard_normal(y.shape).astype(dtype)
    dx = layer.backward(dy)
    fn = torch.softmax if name == "Softmax" else torch.log_softmax
    t = torch.tensor(x, requires_grad=True)
    ty = fn(t, 1, dtype=getattr(torch, dtype))
    ty.backward(torch.tensor(dy))
    assert y.dtype == ty.detach().numpy().dtype and dx.dtype == t.grad.numpy().dtype
    tol = {"float64": 1e-12, "float32": 1e-6, "float16": 4e-3}[dtype]
    np.testing.assert_allclose(y, ty.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(dx, t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, exc", [(np.int64, TypeError), ("float128x", TypeError), (np.complex128, TypeError)])
def test_softmax_dtype_must_be_floating(dtype, exc):
    with pytest.raises(exc, match="dtype must be None or a floating-point"):
        nc.Softmax(dtype=dtype)
    with pytest.raises(exc, match="dtype must be None or a floating-point"):
        nc.LogSoftmax(dtype=dtype)
