"""WeightNorm and WSLinear: gradient checks, the properties of their gradients, PyTorch parity
(forward and every gradient to 1e-10 in float64), state dicts, arguments and input layouts."""

import numpy as np
import pytest

import normcore as nc
from normcore._install import TORCH_CPU
from normcore.layer_cases import randomize_parameters
from norm_tiers import with_layout


def need_torch():
    torch = pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")
    return torch


def random_weight_norm(i, o, dim, rng, bias=True):
    return randomize_parameters(nc.WeightNorm(nc.Linear(i, o, bias=bias), dim=dim), rng)


# --- WeightNorm ------------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None, -1, -2])
@pytest.mark.parametrize("bias", [True, False])
def test_weight_norm_gradcheck(dim, bias):
    rng = np.random.default_rng(0)
    layer = random_weight_norm(4, 3, dim, rng, bias)
    report = nc.gradcheck(layer, rng.standard_normal((2, 5, 4)), dy=rng.standard_normal((2, 5, 3)))
    assert report.passed, report


@pytest.mark.parametrize("dim, g_shape", [(0, (3, 1)), (1, (1, 4)), (None, ()), (-1, ()), (-2, (3, 1))])
def test_weight_norm_starts_with_the_linear_weight_and_keys_as_torch(dim, g_shape):
    linear = nc.Linear(4, 3, rng=1)
    before = linear.state_dict()
    layer = nc.WeightNorm(linear, dim=dim)
    assert list(layer.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert layer.weight_g.shape == g_shape
    w, _, _ = layer.compute_weight()
    np.testing.assert_allclose(w, linear.weight.data, rtol=1e-14)
    x = np.random.default_rng(2).standard_normal((5, 4))
    np.testing.assert_allclose(layer(x), linear(x), rtol=1e-13, atol=1e-15)
    layer.weight_v.data[...] = 0  # the Linear passed in is copied, never changed
    assert all(np.array_equal(before[k], v) for k, v in linear.state_dict().items())


def test_weight_norm_direction_gradient_is_orthogonal_to_v():
    """sum_A(dv * v) = 0 per row: dropping the projection term from dv breaks it."""
    rng = np.random.default_rng(3)
    layer = random_weight_norm(6, 4, 0, rng)
    layer(rng.standard_normal((7, 6)))
    layer.backward(rng.standard_normal((7, 4)))
    dots = np.sum(layer.weight_v.grad * layer.weight_v.data, axis=1)
    assert np.max(np.abs(dots)) < 1e-12 * np.max(np.abs(layer.weight_v.grad)) * np.max(np.abs(layer.weight_v.data))
    assert np.max(np.abs(layer.weight_v.grad)) > 1e-3


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_matches_torch_parametrization(dim):
    """The bridge's twin is torch.nn.Linear under torch.nn.utils.parametrizations.weight_norm:
    forward and every gradient (input, g, v, bias) to 1e-10."""
    need_torch()
    from normcore.torch_bridge import compare
    rng = np.random.default_rng(4)
    report = compare(random_weight_norm(4, 3, dim, rng), rng.standard_normal((2, 5, 4)), atol=1e-10, rtol=1e-10,
                     out=None)
    assert report.passed, str(report)


@pytest.mark.parametrize("api", ["parametrizations", "old"])
def test_weight_norm_loads_a_torch_state_dict_of_either_api(api):
    torch = need_torch()
    import warnings
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the old API is deprecated
        if api == "old":
            theirs = torch.nn.utils.weight_norm(torch.nn.Linear(4, 3).double(), dim=1)
        else:
            theirs = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 3).double(), dim=1)
    with torch.no_grad():
        for q in theirs.parameters():
            q.copy_(torch.randn(q.shape, dtype=torch.float64))
    ours = nc.WeightNorm(nc.Linear(4, 3), dim=1).load_state_dict(theirs.state_dict())
    x = np.random.default_rng(5).standard_normal((6, 4))
    np.testing.assert_allclose(ours(x), theirs(torch.tensor(x)).detach().numpy(), rtol=1e-12)


def test_weight_norm_bad_arguments():
    with pytest.raises(TypeError, match="Linear"):
        nc.WeightNorm(nc.LayerNorm(3))
    with pytest.raises(ValueError, match="dim"):
        nc.WeightNorm(nc.Linear(3, 2), dim=2)
    with pytest.raises(TypeError, match="dim"):
        nc.WeightNorm(nc.Linear(3, 2), dim=0.5)


# --- WSLinear --------------------------------------------------------------------------------

@pytest.mark.parametrize("bias", [True, False])
def test_ws_linear_gradcheck(bias):
    rng = np.random.default_rng(6)
    layer = randomize_parameters(nc.WSLinear(5, 3, bias=bias), rng)
    report = nc.gradcheck(layer, rng.standard_normal((2, 4, 5)), dy=rng.standard_normal((2, 4, 3)))
    assert report.passed, report


def test_ws_linear_weight_gradient_rows_sum_to_zero_and_are_orthogonal_to_w_hat():
    rng = np.random.default_rng(7)
    layer = randomize_parameters(nc.WSLinear(6, 4, eps=0.0), rng)  # with eps, only up to eps
    layer(rng.standard_normal((8, 6)))
    layer.backward(rng.standard_normal((8, 4)))
    W_hat, _ = layer.standardized_weight()
    np.testing.assert_allclose(W_hat.mean(axis=1), 0, atol=1e-15)
    np.testing.assert_allclose((W_hat ** 2).mean(axis=1), 1, rtol=1e-14)
    dW = layer.weight.grad
    assert np.max(np.abs(dW.sum(axis=1))) < 1e-12 and np.max(np.abs((dW * W_hat).sum(axis=1))) < 1e-12
    assert np.max(np.abs(dW)) > 1e-3


def test_ws_linear_matches_torch():
    """The bridge's twin, a few lines of torch: the weight standardised with the biased
    variance, eps inside the root; forward and every gradient to 1e-10."""
    need_torch()
    from normcore.torch_bridge import compare
    rng = np.random.default_rng(8)
    ours = randomize_parameters(nc.WSLinear(5, 3, eps=1e-3), rng)
    report = compare(ours, rng.standard_normal((4, 5)), atol=1e-10, rtol=1e-10, out=None)
    assert report.passed, str(report)


def test_ws_linear_state_dict_is_linears_and_a_bad_input_changes_nothing():
    rng = np.random.default_rng(9)
    layer = randomize_parameters(nc.WSLinear(3, 2), rng)
    assert list(layer.state_dict()) == ["weight", "bias"]
    x = rng.standard_normal((4, 3))
    y = layer(x)
    with pytest.raises(ValueError, match=r"WSLinear\(3, 2\)"):
        layer(np.ones((4, 5)))
    dy = rng.standard_normal((4, 2))
    layer.backward(dy)  # the cache of the good call is still there
    twin = randomize_parameters(nc.WSLinear(3, 2), np.random.default_rng(9))
    twin(x)
    twin.backward(dy)
    np.testing.assert_array_equal(layer.weight.grad, twin.weight.grad)
    np.testing.assert_array_equal(layer(x), y)
    with pytest.raises(ValueError, match="eps"):
        nc.WSLinear(3, 2, eps=-1.0)


@pytest.mark.parametrize("layout", ["F", "transposed", "sliced"])
@pytest.mark.parametrize("make", [lambda: nc.WSLinear(4, 3), lambda: nc.WeightNorm(nc.Linear(4, 3), dim=1)])
def test_layouts_give_the_same_numbers(layout, make):
    rng = np.random.default_rng(10)
    x, dy = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    a, b = (randomize_parameters(make(), np.random.default_rng(1)) for _ in range(2))
    np.testing.assert_array_equal(a(x), b(with_layout(x, layout)))
    np.testing.assert_array_equal(a.backward(dy), b.backward(with_layout(dy, layout)))
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p.grad, q.grad)


def test_neither_is_a_linear_for_folding():
    """Folding a BatchNorm into the raw weight W would ignore the standardisation (WSLinear) or
    the reparametrisation (WeightNorm): fold_batchnorm refuses both."""
    for layer in (nc.WSLinear(3, 2), nc.WeightNorm(nc.Linear(3, 2))):
        assert not isinstance(layer, nc.Linear)
        with pytest.raises(TypeError, match="expects a Linear"):
            nc.fold_batchnorm(layer, nc.BatchNorm1d(2).eval())
