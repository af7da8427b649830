"""DyT (Dynamic Tanh) without PyTorch: hand-computed values, the properties of its gradient,
its arguments and inputs, its state dict, dtypes, and where it stands in the Transformer.

PyTorch parity (forward and every gradient to 1e-10, random layouts and dtypes) is in
``test_torch_parity.py``; the gradient check with random alpha, gamma and beta is in
``test_norm_gradients.py`` (the DyT cases of ``normcore.layer_cases``).
"""

import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import normcore as nc
from normcore.layer_cases import randomize_parameters
from normcore.nn.transformer import NORMS, norm_class
from norm_tiers import LAYOUTS, in_layout, suite_settings


def random_dyt(ns, rng, **kwargs):
    """A DyT with random alpha, gamma and beta (never the 0.5, ones and zeros it starts at)."""
    return randomize_parameters(nc.DyT(ns, **kwargs), rng)


# --- values computed by hand -----------------------------------------------------------------

def test_a_small_example_computed_by_hand():
    layer = nc.DyT(3)
    layer.load_state_dict({"alpha": np.array([0.5]), "weight": np.array([1.0, 2.0, 3.0]),
                           "bias": np.array([0.5, 0.0, -1.0])})
    x = np.array([[0.0, 1.0, -2.0]])
    dy = np.array([[1.0, -1.0, 2.0]])
    t = [math.tanh(0.0), math.tanh(0.5), math.tanh(-1.0)]                # tanh(alpha x)
    np.testing.assert_allclose(layer(x), [[0.5, 2 * t[1], 3 * t[2] - 1.0]], rtol=1e-15)
    dx = layer.backward(dy)
    du = [1.0 * 1 * (1 - t[0] ** 2), -1.0 * 2 * (1 - t[1] ** 2), 2.0 * 3 * (1 - t[2] ** 2)]
    np.testing.assert_allclose(dx, [[0.5 * d for d in du]], rtol=1e-15)
    np.testing.assert_allclose(layer.alpha.grad, [0 * du[0] + 1 * du[1] - 2 * du[2]], rtol=1e-15)
    np.testing.assert_allclose(layer.gamma.grad, [1 * t[0], -1 * t[1], 2 * t[2]], rtol=1e-15)
    np.testing.assert_allclose(layer.beta.grad, [1.0, -1.0, 2.0], rtol=1e-15)


def test_alpha_gradient_sums_over_the_batch_and_every_channel():
    """Two identical rows give twice one row's dalpha (a sum over the last axis only would not)."""
    rng = np.random.default_rng(1)
    layer = random_dyt(4, rng)
    row, dy = rng.standard_normal((1, 4)), rng.standard_normal((1, 4))
    layer(row)
    layer.backward(dy)
    one = layer.alpha.grad.copy()
    layer.zero_grad()
    layer(np.concatenate([row, row]))
    layer.backward(np.concatenate([dy, dy]))
    np.testing.assert_allclose(layer.alpha.grad, 2 * one, rtol=1e-14)
    assert layer.alpha.grad.shape == (1,)


# --- the properties of the gradient ----------------------------------------------------------

@pytest.mark.parametrize("ns, shape", [(5, (3, 5)), ((2, 3), (4, 2, 3)), (3, (2, 2, 2, 3))])
def test_input_gradient_is_element_by_element(ns, shape):
    """dx = alpha * gamma * (1 - t**2) * dy: no term that mixes elements (LayerNorm has two)."""
    rng = np.random.default_rng(2)
    layer = random_dyt(ns, rng)
    x, dy = rng.standard_normal(shape) * 2, rng.standard_normal(shape)
    y = layer(x)
    dx = layer.backward(dy)
    alpha, gamma = layer.alpha.data, layer.gamma.data
    t = np.tanh(alpha * x)
    np.testing.assert_allclose(y, gamma * t + layer.beta.data, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(dx, alpha * gamma * (1 - t ** 2) * dy, rtol=1e-12, atol=1e-15)
    # one upstream value changes one input gradient: the Jacobian is diagonal
    poke = np.zeros(shape)
    poke.flat[3] = 1.0
    layer(x)
    column = layer.backward(poke)
    assert np.count_nonzero(column) == 1 and column.flat[3] != 0
    # and the input gradient of a row need not sum to zero (no mean was removed)
    assert np.abs(dx.reshape(-1, np.prod(layer.normalized_shape)).sum(-1)).min() > 1e-6


def test_alpha_gradient_is_the_input_gradient_against_x_over_alpha():
    """u = alpha x: du/dalpha = x and du/dx = alpha, so dalpha = sum(dx * x) / alpha."""
    rng = np.random.default_rng(3)
    for alpha in (0.5, -1.3, 2.0):
        layer = random_dyt((2, 3), rng)
        layer.alpha.data[:] = alpha
        x = rng.standard_normal((4, 2, 3))
        layer(x)
        dx = layer.backward(rng.standard_normal(x.shape))
        np.testing.assert_allclose(layer.alpha.grad, [(dx * x).sum() / alpha], rtol=1e-12)


def test_the_derivative_of_tanh_is_written_with_the_output():
    """Where |alpha x| is large, t = +-1 and the gradient vanishes; 1 - x**2 would be huge."""
    layer = nc.DyT(2, alpha_init=1.0)
    x = np.array([[8.0, -30.0]])
    layer(x)
    dx = layer.backward(np.ones((1, 2)))
    np.testing.assert_allclose(dx, [[1 / math.cosh(8.0) ** 2, 1 / math.cosh(30.0) ** 2]], rtol=1e-12)
    assert dx[0, 1] > 0  # sech(30)**2 = 3.5e-26, not 1 - tanh(30)**2 = 0


def test_outputs_are_bounded_and_not_invariant_to_scaling():
    """DyT is no normalisation: scaling x changes y (LayerNorm's would not), but |t| <= 1."""
    rng = np.random.default_rng(4)
    layer = nc.DyT(6)
    x = rng.standard_normal((3, 6))
    assert np.abs(layer(x * 1e6)).max() <= 1.0
    assert np.abs(layer(2 * x) - layer(x)).max() > 1e-2


# --- arguments, inputs, state ----------------------------------------------------------------

def test_parameters_and_state_dict():
    layer = nc.DyT((2, 3), alpha_init=0.8)
    assert [k for k in layer.state_dict()] == ["alpha", "weight", "bias"]
    np.testing.assert_array_equal(layer.alpha.data, [0.8])
    np.testing.assert_array_equal(layer.gamma.data, np.ones((2, 3)))
    np.testing.assert_array_equal(layer.beta.data, np.zeros((2, 3)))
    assert list(nc.DyT(3, bias=False).state_dict()) == ["alpha", "weight"]
    bare = nc.DyT(3, elementwise_affine=False)
    assert list(bare.state_dict()) == ["alpha"] and bare.gamma is None and bare.beta is None
    assert bare.alpha.shape == (1,)
    assert repr(layer) == "DyT((2, 3), alpha_init=0.8, elementwise_affine=True)"


def test_state_dict_round_trip():
    rng = np.random.default_rng(5)
    a, b = random_dyt(4, rng), nc.DyT(4)
    b.load_state_dict(a.state_dict())
    x = rng.standard_normal((3, 4))
    np.testing.assert_array_equal(a(x), b(x))
    with pytest.raises(ValueError):
        b.load_state_dict({"alpha": np.ones(2), "weight": np.ones(4), "bias": np.zeros(4)})
    np.testing.assert_array_equal(a(x), b(x))  # a failed load changed nothing


@pytest.mark.parametrize("kwargs, error, message", [
    ({"alpha_init": "0.5"}, TypeError, "DyT: alpha_init must be a number, got '0.5' (str)"),
    ({"alpha_init": True}, TypeError, "DyT: alpha_init must be a number, got True (bool)"),
    ({"alpha_init": None}, TypeError, "DyT: alpha_init must be a number, got None"),
    ({"alpha_init": float("nan")}, ValueError, "DyT: alpha_init must be finite, got nan"),
    ({"alpha_init": float("inf")}, ValueError, "DyT: alpha_init must be finite, got inf"),
    ({"bias": 1}, TypeError, "DyT: bias must be True or False, got 1"),
    ({"elementwise_affine": "no"}, TypeError, "DyT: elementwise_affine must be True or False"),
    ({"dtype": np.int64}, TypeError, "DyT: dtype must be float16, float32 or float64"),
])
def test_bad_arguments_say_what_was_expected(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        nc.DyT(4, **kwargs)


@pytest.mark.parametrize("ns, message", [
    (2.0, "DyT: normalized_shape must be an int or a tuple of ints, got 2.0 (float)"),
    ((), "DyT: normalized_shape must be a positive int or a non-empty tuple of them"),
    ((2, -1), "DyT: normalized_shape must be a positive int, got -1"),
])
def test_bad_normalized_shape(ns, message):
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        nc.DyT(ns)


def test_a_call_that_raises_changes_nothing():
    rng = np.random.default_rng(6)
    layer = random_dyt(4, rng)
    with pytest.raises(RuntimeError):
        layer.backward(np.ones((2, 4)))  # no forward yet
    x, dy = rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    layer(x)
    with pytest.raises(ValueError, match=r"expected input with shape \[\*, 4\], but got input of size \[2, 5\]"):
        layer(np.ones((2, 5)))
    grads = [p.grad.copy() for p in layer.parameters()]
    with pytest.raises(ValueError, match=r"upstream gradient of the output's shape \(2, 4\)"):
        layer.backward(np.ones((2, 5)))
    for p, g in zip(layer.parameters(), grads):
        np.testing.assert_array_equal(p.grad, g)
    fresh = random_dyt(4, np.random.default_rng(6))
    fresh(x)
    np.testing.assert_array_equal(layer.backward(dy), fresh.backward(dy))  # the cache of x, not of the failed call


def test_nothing_cached_is_shared_with_the_caller():
    rng = np.random.default_rng(7)
    layer = random_dyt(4, rng)
    x, dy = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    twin = random_dyt(4, np.random.default_rng(7))
    twin(x.copy())
    expected_dx = twin.backward(dy)
    y = layer(x)
    x[...] = 100.0  # the caller reuses its buffers
    y[...] = 100.0
    dx = layer.backward(dy)
    np.testing.assert_array_equal(dx, expected_dx)
    np.testing.assert_array_equal(twin.alpha.grad, layer.alpha.grad)


@pytest.mark.parametrize("dtype, tol", [(np.float32, 1e-5), (np.float16, 2e-3)])
def test_lower_precision_against_float64(dtype, tol):
    """float32 computes in float32, float16 in float32 cast back once; the parameters' dtype
    is the gradients' dtype."""
    rng = np.random.default_rng(8)
    ref = random_dyt((2, 3), rng)
    low = nc.DyT((2, 3), dtype=dtype)
    low.load_state_dict({k: v.astype(dtype) for k, v in ref.state_dict().items()})
    ref.load_state_dict({k: v.astype(dtype).astype(np.float64) for k, v in ref.state_dict().items()})
    x = rng.standard_normal((4, 2, 3)).astype(dtype)
    dy = rng.standard_normal((4, 2, 3)).astype(dtype)
    y, dx = low(x), low.backward(dy)
    y64, dx64 = ref(x.astype(np.float64)), ref.backward(dy.astype(np.float64))
    assert y.dtype == dx.dtype == np.dtype(dtype)
    for ours, theirs in [(y, y64), (dx, dx64)] + [(p.grad, q.grad) for p, q in zip(low.parameters(),
                                                                                       ref.parameters())]:
        assert ours.dtype == np.dtype(dtype)
        err = np.abs(ours.astype(np.float64) - theirs).max() / max(1.0, np.abs(theirs).max())
        assert err <= tol


@suite_settings(max_examples=30)
@given(data=st.data())
def test_memory_layouts_give_the_same_numbers(data):
    """C, Fortran, transposed, stepped, reversed, broadcast and read-only inputs and upstream
    gradients: the same output and gradients as a C-ordered copy."""
    k = data.draw(st.integers(1, 2), label="len(normalized_shape)")
    ns = tuple(data.draw(st.lists(st.integers(1, 4), min_size=k, max_size=k), label="normalized_shape"))
    lead = tuple(data.draw(st.lists(st.integers(1, 3), max_size=4 - k), label="leading axes"))
    layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16), label="seed"))
    shape = lead + ns
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    free = tuple(range(len(lead)))
    a, b = random_dyt(ns, np.random.default_rng(9)), random_dyt(ns, np.random.default_rng(9))
    xl, dyl = in_layout(x, layout, rng, free), in_layout(dy, layout, rng, free)
    ya, dxa = a(np.ascontiguousarray(xl)), a.backward(np.ascontiguousarray(dyl))
    yb, dxb = b(xl), b.backward(dyl)
    np.testing.assert_allclose(yb, ya, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(dxb, dxa, rtol=1e-15, atol=1e-15)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(q.grad, p.grad, rtol=1e-13, atol=1e-13)


def test_zero_size_input():
    layer = random_dyt(3, np.random.default_rng(10))
    y = layer(np.zeros((0, 3)))
    assert y.shape == (0, 3) and layer.backward(np.zeros((0, 3))).shape == (0, 3)
    np.testing.assert_array_equal(layer.alpha.grad, [0.0])


# --- in the Transformer ----------------------------------------------------------------------

def test_transformer_blocks_take_norm_dyt():
    assert "dyt" in NORMS and norm_class("dyt") is nc.DyT
    block = nc.TransformerBlock(8, 2, 16, norm="dyt", rng=0)
    assert isinstance(block.norm1, nc.DyT) and isinstance(block.norm2, nc.DyT)
    model = nc.TinyTransformer(7, 8, 2, 2, 5, d_ff=12, norm="dyt", rng=0)
    assert isinstance(model.norm_f, nc.DyT)
    with pytest.raises(ValueError, match=r"norm must be one of \('layernorm', 'rmsnorm', 'dyt'\), got 'tanh'"):
        nc.TransformerBlock(8, 2, norm="tanh")


def test_the_fast_tier_uses_the_reference_dyt():
    """normcore.fast has no DyT (one element-wise pass, nothing to block): norm_tier="fast"
    gives the reference class, as norm_class's docstring says, and the numbers are the same."""
    import normcore.fast
    assert not hasattr(normcore.fast, "DyT")
    assert norm_class("dyt", "fast") is nc.DyT
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3, 8))
    blocks = [nc.TransformerBlock(8, 2, 16, norm="dyt", norm_tier=tier, rng=0) for tier in ("reference", "fast")]
    assert isinstance(blocks[1].norm1, nc.DyT)
    np.testing.assert_array_equal(blocks[0](x), blocks[1](x))


def test_a_block_without_biases_gives_its_dyt_norms_no_beta():
    for block in (nc.TransformerBlock(4, 2, norm="dyt", bias=False, position="peri", rng=0),
                  nc.TransformerDecoderBlock(4, 2, norm="dyt", bias=False, rng=0)):
        norms = [m for name, m in block.named_modules() if isinstance(m, nc.DyT)]
        assert norms and all(m.beta is None and m.gamma is not None for m in norms)
        assert not [key for key in block.state_dict() if key.endswith("bias")]
