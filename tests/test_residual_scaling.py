"""LayerScale and ReZero: gradient checks, the gradient at a scale of 0, PyTorch parity through
the bridge's twins (forward and every gradient to 1e-10 in float64), state dicts, arguments and layouts."""

import numpy as np
import pytest

import normcore as nc
from normcore._install import TORCH_CPU
from normcore.layer_cases import randomize_parameters
from norm_tiers import with_layout


@pytest.mark.parametrize("make, shape", [(lambda: nc.LayerScale(4), (3, 4)), (lambda: nc.LayerScale(4), (2, 3, 4)),
                                         (lambda: nc.ReZero(), (2, 3, 4)), (lambda: nc.ReZero(), (5,))])
def test_gradcheck(make, shape):
    rng = np.random.default_rng(0)
    layer = randomize_parameters(make(), rng)
    report = nc.gradcheck(layer, rng.standard_normal(shape), dy=rng.standard_normal(shape))
    assert report.passed, report


def test_rezero_starts_as_zero_and_only_alpha_gets_a_gradient():
    """At alpha = 0 nothing reaches the branch (dx = 0); dalpha = sum(dy * x) is all there is."""
    rng = np.random.default_rng(1)
    branch = nc.Sequential(nc.Linear(4, 4, rng=1), nc.ReZero())
    x, dy = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    assert np.array_equal(branch(x), np.zeros((3, 4)))
    assert np.array_equal(branch.backward(dy), np.zeros((3, 4)))
    linear, rezero = branch
    assert not linear.weight.grad.any()
    np.testing.assert_allclose(rezero.alpha.grad, [np.sum(dy * linear(x))], rtol=1e-14)


def test_layerscale_gradient_is_per_channel():
    rng = np.random.default_rng(2)
    layer = nc.LayerScale(3, init=0.1)
    np.testing.assert_array_equal(layer.gamma.data, [0.1, 0.1, 0.1])
    x, dy = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    np.testing.assert_allclose(layer(x), 0.1 * x, rtol=1e-15)
    np.testing.assert_allclose(layer.backward(dy), 0.1 * dy, rtol=1e-15)
    np.testing.assert_allclose(layer.gamma.grad, (dy * x).sum(axis=(0, 1)), rtol=1e-14)


@pytest.mark.parametrize("make", [lambda: nc.LayerScale(4), lambda: nc.ReZero()])
def test_match_torch(make):
    """The bridge's twins, one line of torch each: forward and every gradient to 1e-10."""
    pytest.importorskip("torch", reason=f"PyTorch is the optional test oracle: {TORCH_CPU}")
    from normcore.torch_bridge import compare
    rng = np.random.default_rng(3)
    report = compare(randomize_parameters(make(), rng), rng.standard_normal((2, 3, 4)), atol=1e-10, rtol=1e-10,
                     out=None)
    assert report.passed, str(report)


def test_state_dicts_and_bad_arguments():
    assert list(nc.LayerScale(3).state_dict()) == ["gamma"]
    sd = nc.ReZero().state_dict()
    assert list(sd) == ["alpha"] and sd["alpha"].shape == (1,) and sd["alpha"][0] == 0.0
    assert nc.LayerScale(3).gamma.data[0] == 1e-5
    with pytest.raises(ValueError, match=r"LayerScale\(3\)"):
        nc.LayerScale(3)(np.ones((2, 4)))
    for bad, err in [(0, ValueError), (2.5, TypeError)]:
        with pytest.raises(err, match="dim"):
            nc.LayerScale(bad)
    with pytest.raises(TypeError, match="init"):
        nc.ReZero(init="0")
    with pytest.raises(TypeError, match="floating-point"):
        nc.ReZero()(np.ones(3, dtype=int))


@pytest.mark.parametrize("layout", ["F", "transposed", "sliced"])
@pytest.mark.parametrize("make", [lambda: nc.LayerScale(4), lambda: nc.ReZero()])
def test_layouts_give_the_same_numbers_and_nothing_is_shared(layout, make):
    rng = np.random.default_rng(4)
    x, dy = rng.standard_normal((3, 5, 4)), rng.standard_normal((3, 5, 4))
    a, b = (randomize_parameters(make(), np.random.default_rng(1)) for _ in range(2))
    xl = with_layout(x, layout).copy(order="K")
    np.testing.assert_array_equal(a(x), b(xl))
    xl[...] = 0  # the caller's array changes after the forward: the backward does not see it
    np.testing.assert_array_equal(a.backward(dy), b.backward(with_layout(dy, layout)))
    np.testing.assert_array_equal(a.parameters()[0].grad, b.parameters()[0].grad)
